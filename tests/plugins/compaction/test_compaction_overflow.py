"""A provider's CONTEXT_WINDOW_EXCEEDED: compact once, retry the step (behaviours 44-45
on the ``agent_request_error`` path)."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import (
    OVERFLOW,
    chars,
    events_of,
    harness,
    options,
    reads,
    summarizer,
    summary_of,
)

from dsh import ModelRequest, UserMessage, hookimpl
from dsh.testing import ScriptedModel, check_invariants, fail, run_turn

pytestmark = pytest.mark.plugins("compaction")


async def overflow_turn(
    second: list[Any], summariser: ScriptedModel, **agent_options: Any
) -> tuple[list[Any], ScriptedModel, Any]:
    """Turn 1 reads five files (far below the model's stated window); turn 2 runs the
    script ``second``. Returns turn 2's events, the model and the agent's history."""
    model = ScriptedModel([*reads(5), *second], context_window=1_000_000)
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options={**options(), **agent_options})
        first = await run_turn(agent, "task")
        assert events_of(first) == []
        events = await run_turn(agent, "next")
        assert check_invariants(agent.session.events) == []
        return events, model, list(agent.session.history)


async def test_b44_overflow_compacts_once_and_the_retry_succeeds() -> None:
    summariser = summarizer("what happened so far")

    events, model, history = await overflow_turn([OVERFLOW, "fits now"], summariser)

    types = [e.type for e in events]
    assert types.index("compact/start") < types.index("compact/end") < types.index("step/retry")
    start, summary, end = events_of(events)
    assert start.data["reason"] == "overflow" and start.data["step"] == 1
    assert end.data["outcome"] == "summarized"
    retry = next(e for e in events if e.type == "step/retry")
    assert retry.data["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert retry.data["reason"] == "compacted the history to fit the window"
    assert events[-1].data["reason"] == "completed"
    failed, retried = model.requests[-2:]
    assert len(retried.messages) < len(failed.messages)
    replaces = summary.data["replaces"]
    assert list(retried.messages) == [
        summary_of("what happened so far"),
        *failed.messages[replaces:],
    ]
    assert retried.messages[-1] == UserMessage(content="next")
    assert history[:-1] == list(retried.messages)
    model.assert_complete()


async def test_b45_overflow_and_a_failing_summariser_end_the_turn_with_the_provider_error() -> None:
    summariser = summarizer(fail("SERVER", "down"))

    events, model, _ = await overflow_turn([OVERFLOW], summariser)

    assert [e.data.get("outcome") for e in events_of(events, "compact/end")] == ["failed"]
    assert not any(e.type == "step/retry" for e in events)
    assert events[-1].data["reason"] == "error"
    assert events[-1].data["error"] == {
        "code": "CONTEXT_WINDOW_EXCEEDED",
        "message": "model 'scripted': prompt is too long",
    }
    model.assert_complete()


async def test_b44_overflow_compacts_only_once_per_step() -> None:
    summariser = summarizer("short")

    events, model, _ = await overflow_turn([OVERFLOW, OVERFLOW], summariser, max_request_retries=3)

    assert len(events_of(events, "compact/start")) == 1
    assert len([e for e in events if e.type == "step/retry"]) == 1
    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    summariser.assert_complete()
    model.assert_complete()


async def test_b45_overflow_after_a_failed_threshold_compaction_does_not_summarise_again() -> None:
    model = ScriptedModel([*reads(5)[:-1], OVERFLOW], context_window=7000)
    summariser = summarizer(fail("SERVER", "down"))
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    assert [e.data["reason"] for e in events_of(events, "compact/start")] == ["threshold"]
    assert len(summariser.requests) == 1
    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"


@pytest.mark.parametrize("code", ["RATE_LIMIT", "SERVER", "INVALID_REQUEST"])
async def test_other_provider_errors_are_left_alone(code: str) -> None:
    events, _, _ = await overflow_turn([fail(code, "no")], summarizer())

    assert events_of(events) == []
    assert events[-1].data["error"]["code"] == code


async def test_overflow_is_left_alone_when_compaction_is_disabled() -> None:
    model = ScriptedModel([OVERFLOW])
    async with harness(model, summarizer()) as h:
        agent = await h.agents.create("a", options=options(enabled=False))
        events = await run_turn(agent, "hi")

    assert events_of(events) == []
    assert events[-1].data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"


class Note:
    """Appends a large note to every request, after compaction's impl: its threshold
    check never sees the note, the refused request holds it."""

    def __init__(self, size: int) -> None:
        self.note = UserMessage(content="n" * size)

    @hookimpl
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        return request.model_copy(update={"messages": (*request.messages, self.note)})


class FirstNote(Note):
    """``Note``, ``tryfirst`` and registered after compaction: before compaction's impl."""

    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        return super().agent_request(request)


@pytest.mark.parametrize("kind", [Note, FirstNote])
async def test_overflow_leaves_room_for_a_note_a_plugin_adds_to_every_request(
    kind: type[Note],
) -> None:
    """The history (6,172 tokens) and a 20,000-token note: the model refuses the
    request. The compaction treats the refused request's size, note included, as the
    window and plans the room the history has below its threshold without the note, so
    the retried request, note included, is below 0.8 of the refused one (planned from
    the history alone, it was 21,381 tokens, over 20,937), and the ``compact/*`` tokens
    are the requests', note included."""
    note = kind(20_000)
    model = ScriptedModel([*reads(5), OVERFLOW, "fits now"], context_window=1_000_000)
    async with harness(model, summarizer("sum"), extra=[("note", note)]) as h:
        agent = await h.agents.create("a", options=options())
        assert events_of(await run_turn(agent, "task")) == []
        events = await run_turn(agent, "next")

    assert events[-1].data["reason"] == "completed"
    # each read is more than the room the note leaves: stubbed, then the rest summarised
    start, _, stubbed, *_, end = events_of(events)
    assert (stubbed.data["outcome"], end.data["outcome"]) == ("pruned", "summarized")
    failed, retried = model.requests[-2:]
    assert (failed.messages[-1], retried.messages[-1]) == (note.note, note.note)
    refused = chars(failed)
    assert chars(retried) <= 0.8 * refused
    assert start.data["tokens"] == stubbed.data["tokens_before"] == refused
    assert end.data["tokens_after"] == chars(retried)
