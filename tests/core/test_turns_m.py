"""``dsh.turns`` and ``AgentHandle.prompt()``, beyond test_turns.py (found by a mutation
review): the answer is the text blocks only of the last message, a turn's own error is
raised before its save error, a turn/end with no error data still raises, and a
timed-out prompt aborts its own turn however its equal prompts and the loop's timing
fall, and no other turn."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from loop_support import LIMIT, Seen, agent_on, ends

from dsh import TurnError, hookimpl
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, hang, text
from dsh.turns import TurnResult, turns


def event(kind: str, seq: int, **data: Any) -> SessionEvent:
    return SessionEvent(kind, seq, 0.0, data)


class Streamed:
    """``streamed["words"]`` is an event set once a chunk of those words is logged."""

    def __init__(self) -> None:
        self._events: dict[str, anyio.Event] = {}

    def __getitem__(self, words: str) -> anyio.Event:
        return self._events.setdefault(words, anyio.Event())

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        if event.type == "assistant/chunk" and "text" in event.data:
            self[event.data["text"]].set()


def answer(seq: int, *content: dict[str, Any]) -> SessionEvent:
    message = {"role": "assistant", "content": list(content), "stop_reason": "stop"}
    return event("assistant/message", seq, message=message)


def test_the_text_is_the_text_blocks_of_the_last_message_only() -> None:
    long = "word " * 40
    (result,) = turns(
        [
            event("turn/start", 0, turn=1),
            event("user/message", 1, content="hi"),
            answer(2, {"type": "text", "text": "an earlier step"}),
            answer(
                3,
                {"type": "reasoning", "text": "thinking aloud", "signature": None},
                {"type": "text", "text": long},
                {"type": "tool_call", "id": "c1", "name": "add", "arguments": "{}"},
                {"type": "text", "text": "the end"},
            ),
            event("turn/end", 4, turn=1, reason="completed"),
        ]
    )
    assert result.text == long + "the end"


def result_of(reason: str, error: dict[str, Any] | None, save_error: str | None) -> TurnResult:
    (result,) = turns(
        [event("turn/start", 0, turn=3), event("turn/end", 1, turn=3, reason=reason, error=error)]
    )
    return TurnResult(
        result.turn, result.reason, result.error, result.usage, result.events, save_error
    )


def test_a_failed_turn_that_was_not_saved_either_raises_its_own_error() -> None:
    failed = result_of("error", {"code": "RATE_LIMIT", "message": "slow down"}, "disk full")
    with pytest.raises(TurnError) as caught:
        failed.raise_for_error()
    assert (caught.value.code, caught.value.reason_message) == ("RATE_LIMIT", "slow down")


def test_a_turn_not_saved_raises_not_saved_with_the_reason() -> None:
    lost = result_of("completed", None, "plugin 'disk' failed in hook session_flush")
    with pytest.raises(TurnError) as caught:
        lost.raise_for_error()
    assert (caught.value.turn, caught.value.code) == (3, "NOT_SAVED")
    assert caught.value.reason_message == "plugin 'disk' failed in hook session_flush"


def test_an_error_turn_with_no_error_data_still_raises() -> None:
    """A log written by another tool (or a repaired one) may end a turn ``error``
    without saying more."""
    with pytest.raises(TurnError) as caught:
        result_of("error", None, None).raise_for_error()
    assert (caught.value.code, caught.value.reason_message) == ("UNKNOWN", "")
    assert str(caught.value) == "turn 3 failed: UNKNOWN"


async def test_a_timed_out_prompt_aborts_its_turn_after_an_equal_prompt_of_anothers_ended() -> None:
    """Another caller's equal prompt ran (and ended) in an earlier turn, after this
    prompt was sent: the time limit still aborts the turn that took this one."""
    seen, streamed = Seen(), Streamed()
    model = ScriptedModel([hang("busy"), text("theirs, answered"), hang("mine, slow")])
    plugins = [("seen", seen), ("streamed", streamed)]
    async with agent_on(model, *plugins, queue_mode="one-at-a-time") as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        agent.send("go on")  # theirs: the same words, queued before mine

        async def give_up_once_mine_streams(limit: anyio.CancelScope) -> None:
            await anyio.lowlevel.checkpoint()
            agent.abort()  # the first turn; theirs, then mine, run after it
            await streamed["mine, slow"].wait()
            limit.cancel()

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                with anyio.CancelScope() as limit:
                    tg.start_soon(give_up_once_mine_streams, limit)
                    await agent.prompt("go on")
            assert limit.cancelled_caught
            await agent.when_idle()
        assert ends(agent.session.events) == [(1, "aborted"), (2, "completed"), (3, "aborted")]


class HoldTheStart:
    """Holds the loop when it reports ``running``: the turn has taken its prompts, and
    logged nothing yet."""

    def __init__(self) -> None:
        self.holding = anyio.Event()
        self.release = anyio.Event()

    @hookimpl
    async def agent_status(self, status: str) -> None:
        if status == "running" and not self.holding.is_set():
            self.holding.set()
            await self.release.wait()


async def test_a_prompt_taken_but_not_yet_logged_has_its_turn_aborted_when_it_times_out() -> None:
    hold = HoldTheStart()
    model = ScriptedModel([text("never asked for")])
    async with agent_on(model, ("hold", hold)) as (_, agent):

        async def give_up_while_held(limit: anyio.CancelScope) -> None:
            await hold.holding.wait()
            limit.cancel()

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                with anyio.CancelScope() as limit:
                    tg.start_soon(give_up_while_held, limit)
                    await agent.prompt("mine")
            assert limit.cancelled_caught
            hold.release.set()
            await agent.when_idle()
        assert ends(agent.session.events) == [(1, "aborted")]
        assert model.requests == []
