"""Review of the fifteenth session's compaction changes (the output reservation in the
threshold, the too-large tool result stub, the summariser's capped answer), by hand
mutation: each test here failed on a mutant of dsh_compaction's source that the other
compaction tests let through (the mutant is named in the test's docstring), and the
strict xfail shows a bug left (see its reason).

The model is an OpenAI-like server (``Server``): a request whose prompt plus its output
reservation exceeds the window is refused with CONTEXT_WINDOW_EXCEEDED."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import (
    CHARS,
    Dump,
    WindowServer,
    events_of,
    harness,
    prompt_tokens,
    result,
    summarizer,
)

import dsh_compaction
from dsh import ModelRequest
from dsh.testing import ScriptedModel, fail, run_turn, text, tool_calls
from dsh_compaction._compact import limit_for
from dsh_compaction._events import too_large_stub
from dsh_compaction._plan import too_large

pytestmark = pytest.mark.plugins("compaction")


async def test_the_latest_steps_too_large_result_is_stubbed_and_the_turn_goes_on() -> None:
    """Mutant: ``compact`` without its ``too_large`` step (_compact.py, "big :=")."""
    server = WindowServer(6000, [tool_calls(("dump", {"size": 40_000})), "done"])
    async with harness(server.model, extra=[("dump", Dump())], chars=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "dump it")

    assert events[-1].data["reason"] == "completed"
    (prune,) = events_of(events, "compact/prune")
    (stub,) = prune.data["pruned"]
    assert stub["index"] == 2  # the latest step's result: no summary reaches it
    assert stub["content"].startswith("[output of dump removed: 40000 characters, about ")
    assert "too large for the model's context window" in stub["content"]
    assert prune.data["tokens_saved"] > 9_000
    assert server.refused == []


async def test_a_manual_compaction_summarises_a_too_large_result_instead_of_stubbing() -> None:
    """A manual compaction always summarises (docs/compaction.md, Prune). Mutant: the
    ``too_large`` step for manual compactions too (``reason != "manual"`` dropped)."""
    model = ScriptedModel([tool_calls(("dump", {"size": 8_000})), "done"], context_window=100_000)
    options = {"model": "scripted", "compaction": {"model": "summarizer", "tail_tokens": 10}}
    extra = [("dump", Dump())]
    async with harness(model, summarizer(text("the summary")), extra=extra) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "dump it")
        result = await dsh_compaction.compact_now(agent)

    assert result.outcome == "summarized"
    assert not any("removed:" in str(m) for m in agent.session.history)


async def test_a_manual_compaction_leaves_the_window_less_the_reserve_not_the_size() -> None:
    """The reserve is taken from the window dsh knows, not from the history's size a
    manual compaction treats as the window. Mutant: ``limit_for(..., window, ...)``
    instead of ``known`` in ``compact`` (the tail would shrink to 3000 - 2000 = 1000
    tokens' half)."""
    steps = [text("a" * 100) for _ in range(10)]
    model = ScriptedModel(steps, context_window=100_000)
    options = {"model": "scripted", "max_tokens": 2000, "compaction": {"model": "summarizer"}}
    async with harness(model, summarizer(text("s"))) as h:
        agent = await h.agents.create("a", options=options)
        for i in range(10):
            await run_turn(agent, str(i) * 200)  # 300 tokens a turn (one a character)
        result = await dsh_compaction.compact_now(agent)

    assert result.outcome == "summarized"
    # the tail: 0.3 of the history's 3000 tokens, under half of the room (0.8 * 3000)
    assert len(agent.session.history) == 1 + 6


async def test_a_history_still_over_the_limit_after_the_stub_is_summarised_before_sending() -> None:
    """After the too-large result's stub, the rest (three turns of 1150 tokens, tools)
    is still over window - reserve: a second compaction summarises it before the request
    is sent. Was a strict xfail: the stub alone was the compaction."""
    turns = 3
    server = WindowServer(6000, ["ok"] * turns + [tool_calls(("dump", {"size": 20_000})), "done"])
    async with harness(server.model, extra=[("dump", Dump())], chars=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "max_tokens": 1500})
        for i in range(turns):
            await run_turn(agent, str(i) * 4600)  # 1150 tokens a turn
        events = await run_turn(agent, "dump it")

    assert events[-1].data["reason"] == "completed"
    assert events_of(events, "compact/prune")  # the stub...
    assert events_of(events, "compact/summary")  # ...then the summary of the rest...
    assert server.refused == []  # ...and no request refused for want of a summary
    ends = [e.data for e in events_of(events, "compact/end")]
    assert [(e["reason"], e["outcome"]) for e in ends] == [
        ("threshold", "pruned"),
        ("threshold", "summarized"),
    ]
    assert ends[1]["tokens_before"] == ends[0]["tokens_after"]


def test_a_stub_no_smaller_than_the_result_is_not_proposed() -> None:
    """``too_large``: a result whose stub would save nothing (as long as the stub) is
    left as it is. Mutant: ``saves >= 0`` (_plan.py)."""

    def saved(message: Any) -> int:
        count = CHARS.count_message(message)
        stub = too_large_stub(message, count)
        return count - CHARS.count_message(message.model_copy(update={"content": stub}))

    message = next(m for n in range(50, 400) if saved(m := result("c", "x" * n)) == 0)
    history = [message]
    assert too_large(history, [CHARS.count_message(message)], 1, CHARS) == ()


async def test_the_requests_max_tokens_is_the_reserve_before_the_models_output_limit() -> None:
    """A request's ``max_tokens`` is what the server reserves, not the model's larger
    ``max_output_tokens``. Mutant: the model's limit first in ``_limits`` (_plugin.py)."""
    model = ScriptedModel(["ok", "ok"], context_window=8000, max_output_tokens=4000)
    async with harness(model) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "max_tokens": 500})
        await run_turn(agent, "x" * 5000)
        events = await run_turn(agent, "more")  # 5000 tokens: under 8000 - 500 and 6400

    assert events_of(events) == []
    assert events[-1].data["reason"] == "completed"


async def test_a_manual_compaction_leaves_room_for_the_reserve_in_a_small_window() -> None:
    """Manual: the room is the window less the reserve when that is under the
    threshold's share of the history; its half bounds the tail. Mutant: ``reserve=0``
    in ``compact_now`` (_plugin.py)."""
    model = ScriptedModel([text("a" * 100) for _ in range(10)], context_window=4000)
    settings = {"model": "summarizer", "enabled": False, "tail_ratio": 0.5}
    options = {"model": "scripted", "max_tokens": 2000, "compaction": settings}
    async with harness(model, summarizer(text("s"))) as h:
        agent = await h.agents.create("a", options=options)
        for i in range(10):
            await run_turn(agent, str(i) * 200)  # 300 tokens a turn
        result = await dsh_compaction.compact_now(agent)

    assert result.outcome == "summarized"
    # room: min(0.8 * 3000, 4000 - 2000) = 2000; the tail at most its half, 1000 tokens
    tail = agent.session.history[1:]
    assert sum(CHARS.count_message(m) for m in tail) <= 1000


class SmallSummariser:
    """A summariser model of ``window`` tokens that refuses a request over it, as a
    server counts it (the prompt and the answer it reserves)."""

    def __init__(self, window: int) -> None:
        self.requests: list[int] = []
        self.model = ScriptedModel([self.answer] * 50, name="summarizer", context_window=window)

    def answer(self, request: ModelRequest) -> Any:
        needed = prompt_tokens(request) + (request.max_tokens or 0)
        self.requests.append(needed)
        if needed > (self.model.context_window or 0):
            return fail("CONTEXT_WINDOW_EXCEEDED", f"you requested {needed}")
        return f"a short summary {len(self.requests)}"  # each merge says something new


async def test_each_summariser_request_fits_a_1500_token_window() -> None:
    """On a 1,500-token summariser the chunks shrink under 1,000 tokens (a quarter of
    the window at most). Mutant: the 1,000-token floor whatever the window
    (``min(1_000, limit // 4)`` -> ``1_000`` in _summarise.py)."""
    small = SmallSummariser(1500)
    model = ScriptedModel([text("a" * 400) for _ in range(8)], context_window=100_000)
    async with harness(model, small.model, chars=False) as h:
        options = {"model": "scripted", "compaction": {"model": "summarizer", "enabled": False}}
        agent = await h.agents.create("a", options=options)
        for i in range(8):
            await run_turn(agent, str(i) * 1200)  # about 400 tokens a turn
        result = await dsh_compaction.compact_now(agent)

    assert result.outcome == "summarized", result
    assert len(small.requests) > 1
    assert max(small.requests) <= 1500


def test_the_limit_is_the_threshold_or_the_window_less_the_reserve_exactly() -> None:
    """``limit_for`` at its edges. Mutants: an off-by-one below ``window - reserve``,
    ``>`` for ``>=`` (a reserve equal to the window)."""
    assert limit_for(6400, 8000, 2000) == 6000
    assert limit_for(6400, 8000, 1600) == 6400
    assert limit_for(6400, 8000, 7999) == 1
    assert limit_for(6400, 8000, 8000) == 6400  # the server's to refuse
    assert limit_for(6400, None, 2000) == 6400
    assert limit_for(6400, 8000, 0) == 6400


async def test_a_capped_answer_leaves_its_share_of_the_window_to_the_chunks() -> None:
    """With ``max_summary_tokens`` over a quarter of the summariser's window, the chunks
    are sized for the capped answer (a quarter of 20,000), not the setting (8,000): half
    the calls. Mutant: the overhead counted with ``max_summary_tokens`` (_summarise.py)."""
    small = SmallSummariser(20_000)
    model = ScriptedModel([text("a" * 400) for _ in range(12)], context_window=100_000)
    async with harness(model, small.model, chars=False) as h:
        settings = {"model": "summarizer", "enabled": False, "max_summary_tokens": 8000}
        agent = await h.agents.create("a", options={"model": "scripted", "compaction": settings})
        for i in range(12):
            await run_turn(agent, str(i) * 2400)  # about 700 tokens a turn
        result = await dsh_compaction.compact_now(agent)

    assert result.outcome == "summarized"
    assert all(r <= 20_000 for r in small.requests)
    assert len(small.requests) <= 6  # 10 with chunks sized for an 8,000-token answer
