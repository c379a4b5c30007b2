"""A plugin whose ``agent_request`` runs before compaction's adds messages to every
request (a reminder): compaction measures that request without counting the history
again each step, and leaves room for what the plugin adds when it compacts
(docs/compaction.md, "A plugin that changes the request's messages")."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import CharCounter, events_of, harness, options, reads, summarizer

from dsh import Message, ModelRequest, UserMessage, hookimpl
from dsh.session import Session
from dsh.testing import ScriptedModel, run_turn
from dsh_compaction import RequestEstimator

pytestmark = pytest.mark.plugins("compaction")


class Counting(CharCounter):
    """``CharCounter`` that counts the messages it is asked about."""

    def __init__(self) -> None:
        super().__init__()
        self.messages = 0

    def count_message(self, message: Message) -> int:
        self.messages += 1
        return super().count_message(message)


class CountWith:
    def __init__(self, counter: Counting) -> None:
        self.counter = counter

    @hookimpl(optionalhook=True)
    def compaction_token_counter(self) -> Counting:
        return self.counter


class Reminder:
    """``tryfirst``, registered after compaction: appends a new reminder (a new object
    each time) to every request before compaction's impl sees it."""

    def __init__(self, size: int = 40) -> None:
        self.size = size

    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest, step: int) -> ModelRequest:
        note = UserMessage(content=f"reminder {step}: ".ljust(self.size, "r"))
        return request.model_copy(update={"messages": (*request.messages, note)})


def len_of(message: Message) -> int:
    return CharCounter().count_message(message)


def fresh(request: ModelRequest) -> int:
    """What a new estimator counts for ``request``: every message, once."""
    return RequestEstimator(CharCounter()).request(request)


async def test_a_note_on_every_request_is_counted_without_counting_the_history_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """30 steps, each adding a call and its result, and a new reminder per request:
    each check asks the counter about those three messages only (the first: the task
    and its reminder), not the whole history again, and its estimate is a full
    count's."""
    counter = Counting()
    asked: list[int] = []
    estimates: list[tuple[int, int]] = []
    original = RequestEstimator.request

    def request(self: RequestEstimator, request: ModelRequest, *args: Any) -> int:
        before = counter.messages
        tokens = original(self, request, *args)
        asked.append(counter.messages - before)
        estimates.append((tokens, original(RequestEstimator(CharCounter()), request)))
        return tokens

    monkeypatch.setattr(RequestEstimator, "request", request)
    model = ScriptedModel(reads(30), context_window=1_000_000)
    plugins = [("counter", CountWith(counter)), ("reminder", Reminder())]
    async with harness(model, extra=plugins, chars=False) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    assert events[-1].data["reason"] == "completed", events[-1].data
    assert len(model.requests) == 31
    assert asked == [2] + [3] * 30  # constant per step, not growing with the history
    assert all(tokens == full for tokens, full in estimates)
    assert not events_of(events)


def test_an_edited_request_is_measured_as_a_full_count_from_the_kept_counts() -> None:
    """A note put first, a message of the recent tail replaced or dropped, a note
    appended: the estimate is a full count's, the history's messages are counted once
    and the plugin's (changed) messages each time."""
    session = Session("s")
    counter = Counting()
    estimator = RequestEstimator(counter)
    first = UserMessage(content="always first")
    edits = [
        lambda h: [first, *h],
        lambda h: [*h[:-1], UserMessage(content="the last one, rewritten"), first],
        lambda h: [*h[:-2], h[-1]],
        lambda h: [first, *h, UserMessage(content="and a note")],
        lambda h: list(h),
    ]
    added = []
    for step in range(40):
        session._append("user/message", {"content": f"message {step:03} " + "x" * step})
        history = session.history
        messages: list[Message] = edits[step % len(edits)](history)
        request = ModelRequest.model_construct(system="sys", tools=(), messages=messages)
        before = counter.messages

        assert estimator.request(request, history) == fresh(request)

        added.append(counter.messages - before)
        own = [m for m in messages if not any(m is h for h in history)]
        assert estimator.edited(messages, history)[1] == sum(map(len_of, own))
    # the new history message, then what the edit made that is not in the history
    assert added == [1 + [1, 2, 0, 2, 0][step % 5] for step in range(40)]


async def test_a_big_note_is_left_room_for_so_the_compacted_request_fits() -> None:
    """A 3,800-token note on each request, turns of 400 tokens, limit 5,600: the
    compaction keeps a tail that leaves room for the note, so no request (the ones
    rebuilt from a compacted history included) is over the limit."""

    class Note:
        note = UserMessage(content="n" * 3800)

        @hookimpl(tryfirst=True)
        def agent_request(self, request: ModelRequest) -> ModelRequest:
            return request.model_copy(update={"messages": (*request.messages, self.note)})

    model = ScriptedModel(["a" * 100] * 6, context_window=7000)
    events = []
    async with harness(model, summarizer("sum", "sum2"), extra=[("note", Note())]) as h:
        agent = await h.agents.create("a", options=options())
        for turn in range(6):
            events += await run_turn(agent, str(turn) * 300)

    ends = events_of(events, "compact/end")
    assert [(e.data["outcome"], e.data["turn"]) for e in ends] == [("summarized", 5)]
    sizes = [fresh(request) for request in model.requests]
    assert max(sizes) <= 0.8 * 7000, sizes
    # the compaction logs the request it measured, the note included: over the limit
    assert all(e.data["tokens"] > 0.8 * 7000 for e in events_of(events, "compact/start"))
