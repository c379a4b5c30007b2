"""Behaviour 30 at a turn's end: ``abort()`` stops the in-flight step, so once the turn's
outcome is settled (it failed, or its last step decided to stop) an abort that lands while
the turn is still being closed (an async ``session_event`` observer of a closing event)
changes nothing: turn/end keeps the reason it had. Disposing still ends it ``disposed``
(the design's precedence), its error kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from loop_support import LIMIT, ends

from dsh import TurnError, hookimpl
from dsh.agent import AgentHandle
from dsh.errors import ModelError
from dsh.llm.base import Chunk, Finish, TextDelta
from dsh.messages import ModelRequest
from dsh.session import SessionEvent
from dsh.testing import Reply, ScriptedModel, check_invariants, fail, scripted_harness, tool_calls


class HalfThenFail(ScriptedModel):
    """Streams half an answer, then the server fails."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        yield TextDelta("half an answer")
        raise ModelError("SERVER", "upstream 500")


class StopWhile:
    """An async observer that calls ``act(agent)`` while it handles the first event for
    which ``when(event)`` holds (the loop awaits it, shielded)."""

    def __init__(self, when: Callable[[SessionEvent], bool], act: str = "abort") -> None:
        self.when = when
        self.act = act
        self.agent: AgentHandle | None = None
        self.done = False

    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        if self.done or self.agent is None or not self.when(event):
            return
        self.done = True
        if self.act == "abort":
            self.agent.abort()
        else:
            self.agent.agent.begin_stop()  # what dispose() does first
        await anyio.lowlevel.checkpoint()


async def turn_end(model: ScriptedModel, observer: StopWhile) -> dict[str, Any]:
    async with scripted_harness(
        model, plugins=[("observer", observer)], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        observer.agent = agent
        with anyio.fail_after(LIMIT):
            agent.send("go")
            await agent.when_idle()
        assert observer.done
        events = agent.session.events
        assert check_invariants(events) == []
        [end] = [e.data for e in events if e.type == "turn/end"]
        assert ends(events) == [(1, end["reason"])]
        return end


def is_type(kind: str) -> Callable[[SessionEvent], bool]:
    return lambda event: event.type == kind


async def test_b30_an_abort_while_a_failed_turn_is_closed_leaves_it_failed() -> None:
    end = await turn_end(
        ScriptedModel([fail("SERVER", "upstream 500")]), StopWhile(is_type("step/end"))
    )
    assert end["reason"] == "error"
    assert end["error"]["code"] == "SERVER"


async def test_b30_an_abort_during_a_cut_off_answer_of_a_failed_turn_leaves_it_failed() -> None:
    seen: list[dict[str, Any]] = []

    def cut_off(event: SessionEvent) -> bool:
        if event.type == "assistant/message":
            seen.append(event.data["message"])
            return True
        return False

    end = await turn_end(HalfThenFail(), StopWhile(cut_off))
    assert end["reason"] == "error"
    assert end["error"] == {"code": "SERVER", "message": "model 'scripted': upstream 500"}
    assert seen[0]["stop_reason"] == "error"  # not "aborted": the step failed first


async def test_b30_an_abort_during_the_last_step_end_of_an_answered_turn_changes_nothing() -> None:
    end = await turn_end(ScriptedModel(["the full answer"]), StopWhile(is_type("step/end")))
    assert end["reason"] == "completed"
    assert "error" not in end


async def test_b30_an_abort_as_a_refused_answer_is_logged_leaves_the_turn_failed() -> None:
    refused = Reply((TextDelta("no"), Finish("error")))
    end = await turn_end(ScriptedModel([refused]), StopWhile(is_type("assistant/message")))
    assert (end["reason"], end["error"]["code"]) == ("error", "REFUSED")


async def test_b30_an_abort_during_the_step_end_of_a_step_that_continues_aborts_the_turn() -> None:
    model = ScriptedModel([tool_calls(("nothing", {})), "never asked"])
    end = await turn_end(model, StopWhile(is_type("step/end")))
    assert end["reason"] == "aborted"
    assert len(model.requests) == 1


async def test_b31_disposing_while_a_failed_turn_is_closed_still_ends_it_disposed() -> None:
    observer = StopWhile(is_type("step/end"), act="dispose")
    end = await turn_end(ScriptedModel([fail("SERVER", "upstream 500")]), observer)
    assert end["reason"] == "disposed"
    assert end["error"]["code"] == "SERVER"  # what it failed with is kept


async def test_b30_the_prompt_of_a_failed_turn_aborted_too_late_still_raises() -> None:
    observer = StopWhile(is_type("step/end"))
    model = ScriptedModel([fail("SERVER", "upstream 500")])
    async with scripted_harness(
        model, plugins=[("observer", observer)], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        observer.agent = agent
        with anyio.fail_after(LIMIT):
            result = await agent.prompt("go")
    with pytest.raises(TurnError, match="upstream 500"):
        result.raise_for_error()
