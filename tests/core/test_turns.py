"""``AgentHandle.prompt()`` and ``dsh.turns``: a program sends a prompt and gets the
turn that took it (its answer, how it ended, its usage and events), and turns a failed
turn into an exception when it wants one (``raise_for_error()``, as httpx's
``raise_for_status()``)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from loop_support import LIMIT, Seen, agent_on, ends

from dsh import DshError, TurnError, Usage, hookimpl
from dsh.agent import AgentHandle
from dsh.testing import ScriptedModel, fail, hang, text, tool_calls
from dsh.turns import TurnResult, turns


async def test_prompt_returns_the_turn_with_its_answer() -> None:
    model = ScriptedModel([tool_calls(("add", {"a": 1, "b": 2})), text("It is 3.")])
    async with agent_on(model) as (_, agent):
        with anyio.fail_after(LIMIT):
            result = await agent.prompt("1+2?")
        assert isinstance(result, TurnResult)
        assert (result.turn, result.reason, result.error) == (1, "completed", None)
        assert result.text == "It is 3."
        assert result.prompts == ["1+2?"]
        assert result.events == tuple(agent.session.events)
        assert result.events[0].type == "turn/start" and result.events[-1].type == "turn/end"
        assert result.usage == Usage.model_validate(result.events[-1].data["usage"])
        result.raise_for_error()  # nothing to raise

        second = await agent.prompt("again?")
        assert second.turn == 2 and second.reason == "error"  # the script is used up
        assert second.error is not None and second.error["code"] == "SCRIPT_EXHAUSTED"


async def test_a_failed_turn_is_returned_and_raise_for_error_raises_it() -> None:
    model = ScriptedModel([fail("RATE_LIMIT", "slow down")])
    async with agent_on(model) as (_, agent):
        with anyio.fail_after(LIMIT):
            result = await agent.prompt("hi")
        assert result.reason == "error"
        assert result.error == {"code": "RATE_LIMIT", "message": "model 'scripted': slow down"}
        assert result.text == ""
        with pytest.raises(TurnError) as caught:
            result.raise_for_error()
        error = caught.value
        assert isinstance(error, DshError)
        assert (error.turn, error.code) == (1, "RATE_LIMIT")
        assert error.reason_message == "model 'scripted': slow down"
        assert (error.plugin, error.hook) == (None, None)
        assert str(error) == "turn 1 failed: RATE_LIMIT: model 'scripted': slow down"


async def test_a_plugins_failure_names_the_plugin_and_hook() -> None:
    class Broken:
        @hookimpl
        def agent_request(self) -> None:
            raise RuntimeError("boom")

    async with agent_on(ScriptedModel([text("x")]), ("broken", Broken())) as (_, agent):
        with anyio.fail_after(LIMIT):
            result = await agent.prompt("hi")
        with pytest.raises(TurnError) as caught:
            result.raise_for_error()
        assert (caught.value.code, caught.value.plugin) == ("HOOK", "broken")
        assert caught.value.hook == "agent_request"


async def test_an_aborted_turn_is_returned_with_the_text_it_had_streamed() -> None:
    seen = Seen()
    async with agent_on(ScriptedModel([hang("Half")]), ("seen", seen)) as (_, agent):
        async with anyio.create_task_group() as tg:

            async def abort_when_streaming() -> None:
                await seen["assistant/chunk"].wait()
                agent.abort()

            tg.start_soon(abort_when_streaming)
            with anyio.fail_after(LIMIT):
                result = await agent.prompt("hi")
        assert (result.reason, result.text) == ("aborted", "Half")
        result.raise_for_error()  # only an error raises


async def queued(agent: AgentHandle, *prompts: str) -> None:
    """Wait until exactly ``prompts`` are queued: a prompt sent by a task just started
    has been sent (trio runs a batch of new tasks, and the caller, in either order)."""
    with anyio.fail_after(LIMIT):
        while agent.agent.inbox.queued != list(prompts):
            await anyio.lowlevel.checkpoint()


async def test_prompts_batched_into_one_turn_each_get_that_turn() -> None:
    seen = Seen()
    model = ScriptedModel([hang("busy"), text("both answered")])
    async with agent_on(model, ("seen", seen)) as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        results: dict[str, TurnResult] = {}

        async def ask(prompt: str) -> None:
            results[prompt] = await agent.prompt(prompt)

        async with anyio.create_task_group() as tg:  # in this order on every backend
            tg.start_soon(ask, "second")
            await queued(agent, "second")
            tg.start_soon(ask, "third")
            await queued(agent, "second", "third")
            agent.abort()  # the first turn; the queued prompts run after it
        assert results["second"] is not None
        assert results["second"].prompts == ["second", "third"] == results["third"].prompts
        assert results["second"].text == "both answered"
        assert results["second"].turn == 2


async def test_a_prompt_dropped_by_cancel_is_a_dsh_error() -> None:
    seen = Seen()
    async with agent_on(ScriptedModel([hang("busy")]), ("seen", seen)) as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        caught: list[BaseException] = []

        async def ask() -> None:
            try:
                await agent.prompt("never answered")
            except DshError as exc:
                caught.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await queued(agent, "never answered")
            agent.cancel()
        assert [str(e) for e in caught] == [
            "agent 'a': the prompt was dropped before a turn took it"
        ]


async def test_status_follows_the_agent() -> None:
    seen = Seen()
    async with agent_on(ScriptedModel([hang("x")]), ("seen", seen)) as (_, agent):
        assert agent.status == "idle"
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        assert agent.status == "running"
        await agent.dispose()
        assert agent.status == "disposed"


def event(kind: str, seq: int, **data: Any) -> Any:
    from dsh.session import SessionEvent

    return SessionEvent(kind, seq, 0.0, data)


def test_turns_leaves_out_turns_that_are_not_whole() -> None:
    log = [
        event("user/message", 0, content="before"),  # the end of a turn begun earlier
        event("turn/end", 1, turn=1, reason="completed", usage={}),
        event("turn/start", 2, turn=2),
        event("user/message", 3, content="b"),
        event("turn/end", 4, turn=2, reason="max-tokens"),
        event("turn/start", 5, turn=3),  # still running
    ]
    (only,) = turns(log)
    assert (only.turn, only.reason, only.prompts, only.usage) == (2, "max-tokens", ["b"], Usage())
    assert [e.seq for e in only.events] == [2, 3, 4]


async def test_a_timed_out_prompt_still_queued_is_taken_back_and_the_running_turn_left_alone() -> (
    None
):
    seen = Seen()
    model = ScriptedModel([hang("busy"), text("the first, finished")])
    async with agent_on(model, ("seen", seen), queue_mode="one-at-a-time") as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        with anyio.move_on_after(0.05) as limit:
            await agent.prompt("second")
        assert limit.cancelled_caught
        assert agent.status == "running"  # the first turn was not aborted
        assert agent.agent.inbox.queued == []
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        users = [e.data["content"] for e in agent.session.events if e.type == "user/message"]
        assert users == ["first"]  # "second" never ran


async def test_a_timed_out_prompt_aborts_the_turn_that_took_it_and_no_other() -> None:
    seen = Seen()
    model = ScriptedModel([hang("slow"), text("later answered")])
    async with agent_on(model, ("seen", seen), queue_mode="one-at-a-time") as (_, agent):

        async def give_up_once_it_streams(limit: anyio.CancelScope) -> None:
            await seen["assistant/chunk"].wait()
            agent.send("later")
            limit.cancel()  # stands for a time limit running out

        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as limit:
                tg.start_soon(give_up_once_it_streams, limit)
                await agent.prompt("slow one")
        assert limit.cancelled_caught
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert ends(agent.session.events) == [(1, "aborted"), (2, "completed")]


async def test_a_timed_out_prompt_whose_turn_ended_aborts_nothing() -> None:
    """The time limit runs out as the prompt's turn ends (it is settled) and the next
    prompt's turn starts: neither is aborted, whichever of the limit and the answer
    reaches ``prompt()`` first."""
    seen = Seen()
    model = ScriptedModel([text("mine, done"), hang("theirs, still going")])
    async with agent_on(model, ("seen", seen), queue_mode="one-at-a-time") as (_, agent):

        async def theirs_then_give_up(limit: anyio.CancelScope) -> None:
            agent.send("theirs")
            await seen["turn/end"].wait()  # mine ended
            limit.cancel()

        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as limit:
                tg.start_soon(theirs_then_give_up, limit)
                await agent.prompt("mine")
        await anyio.sleep(0.05)  # an abort, had there been one, has ended the turn by now
        assert agent.status == "running"  # theirs was not aborted
        assert ends(agent.session.events) == [(1, "completed")]
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert ends(agent.session.events) == [(1, "completed"), (2, "aborted")]


async def test_a_rate_limits_wait_reaches_the_turn_and_its_error() -> None:
    from dsh import ModelError
    from dsh.testing import Reply

    model = ScriptedModel([Reply(error=ModelError("RATE_LIMIT", "slow down", retry_after=7.5))])
    async with agent_on(model) as (_, agent):
        with anyio.fail_after(LIMIT):
            result = await agent.prompt("hi")
    assert result.error == {
        "code": "RATE_LIMIT",
        "message": "model 'scripted': slow down",
        "retry_after": 7.5,
    }
    with pytest.raises(TurnError) as caught:
        result.raise_for_error()
    assert caught.value.retry_after == 7.5


async def test_a_turn_that_could_not_be_saved_says_so_and_raises_for_it() -> None:
    class FullDisk:
        def __init__(self) -> None:
            self.fail = True

        @hookimpl
        def session_flush(self) -> None:
            if self.fail:
                raise OSError(28, "No space left on device")

    disk = FullDisk()
    async with agent_on(ScriptedModel([text("one"), text("two")]), ("disk", disk)) as (_, agent):
        with anyio.fail_after(LIMIT):
            lost = await agent.prompt("hi")
        assert lost.reason == "completed" and lost.save_error is not None
        assert lost.save_error.startswith("plugin 'disk' failed in hook session_flush")
        assert lost.save_error.endswith("OSError: [Errno 28] No space left on device")
        with pytest.raises(TurnError) as caught:
            lost.raise_for_error()
        assert caught.value.code == "NOT_SAVED"
        disk.fail = False
        with anyio.fail_after(LIMIT):
            kept = await agent.prompt("again")
        assert kept.save_error is None
        kept.raise_for_error()


async def test_equal_prompts_each_get_their_own_turn() -> None:
    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model, queue_mode="one-at-a-time") as (_, agent):
        results: list[TurnResult] = []

        async def ask() -> None:
            results.append(await agent.prompt("continue"))

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                tg.start_soon(ask)
        assert sorted((r.turn, r.text) for r in results) == [(1, "one"), (2, "two")]


async def test_a_timed_out_prompt_leaves_an_equal_prompt_of_someone_else_queued() -> None:
    """The same string object queued by another caller is theirs: the timed-out prompt's
    own turn is aborted, theirs still runs."""
    seen = Seen()
    same = "go on"
    model = ScriptedModel([hang("mine"), text("theirs, answered")])
    async with agent_on(model, ("seen", seen), queue_mode="one-at-a-time") as (_, agent):

        async def theirs_then_give_up(limit: anyio.CancelScope) -> None:
            await seen["assistant/chunk"].wait()
            agent.send(same)
            limit.cancel()

        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as limit:
                tg.start_soon(theirs_then_give_up, limit)
                await agent.prompt(same)
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert ends(agent.session.events) == [(1, "aborted"), (2, "completed")]


class FullDisk:
    @hookimpl
    def session_flush(self) -> None:
        raise OSError(28, "No space left on device")


async def test_a_failed_save_is_logged_naming_the_session_and_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Which session was not saved (the id printed at the start may name none on disk)."""
    model = ScriptedModel([text("one")])
    with caplog.at_level(logging.ERROR, logger="dsh.loop"):
        async with agent_on(model, ("disk", FullDisk())) as (_, agent):
            with anyio.fail_after(LIMIT):
                await agent.prompt("hi")
    said = f"agent 'a': session {agent.session.id} not saved (turn 1): plugin 'disk' failed"
    assert said in caplog.text


async def test_every_prompt_batched_into_an_unsaved_turn_hears_of_it() -> None:
    seen = Seen()
    model = ScriptedModel([hang("busy"), text("both")])
    async with agent_on(model, ("seen", seen), ("disk", FullDisk())) as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        results: list[TurnResult] = []

        async def ask(prompt: str) -> None:
            results.append(await agent.prompt(prompt))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "second")
            await queued(agent, "second")
            tg.start_soon(ask, "third")
            await queued(agent, "second", "third")
            agent.abort()
        assert [r.turn for r in results] == [2, 2]
        assert all(r.save_error and "No space left" in r.save_error for r in results)


async def test_options_changed_on_the_handle_apply_from_the_next_request() -> None:
    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model) as (_, agent):
        with anyio.fail_after(LIMIT):
            await agent.prompt("hi")
            agent.options["system_prompt"] = "Be brief."
            await agent.prompt("again")
    assert [r.system for r in model.requests] == ["", "Be brief."]


def test_a_turn_error_without_a_message_is_said_as_its_code_alone() -> None:
    assert str(TurnError(3, "SERVER", "")) == "turn 3 failed: SERVER"
    assert str(TurnError(3, "SERVER", "overloaded")) == "turn 3 failed: SERVER: overloaded"
