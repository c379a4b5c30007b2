"""``compact_now``: the manual ``/compact``, between turns and in the middle of one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from compaction_util import events_of, harness, pairing_problems, reads, summarizer, summary_of

from dsh import DshError, UserMessage, hookimpl
from dsh.testing import InMemoryPersistence, ScriptedModel, check_invariants, run_turn, tool_calls
from dsh_compaction import compact_now

pytestmark = pytest.mark.plugins("compaction")

OPTIONS = {"model": "scripted", "compaction": {"model": "summarizer", "prune_chars": 0}}
BIG = 1_000_000  # no automatic compaction


async def test_compact_now_between_turns_compacts_logs_and_flushes() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel([*reads(3), "next answer"], context_window=BIG)
    async with harness(model, summarizer("by hand"), extra=[("mem", store)]) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task")
        flushes = store.flushes
        before = list(agent.session.history)

        result = await compact_now(agent)  # the handle works, as the CLI holds one

        assert (result.outcome, result.reason, result.summary) == (
            "summarized",
            "manual",
            "by hand",
        )
        assert result.tokens_after < result.tokens_before
        assert store.flushes == flushes + 1  # durable at once, not at the next turn
        history = list(agent.session.history)
        await run_turn(agent, "next")
        events = list(agent.session.events)

    assert history[0] == summary_of("by hand")
    assert history[-1] == before[-1] and len(history) < len(before)
    stored = [e.type for e in store.stored[agent.session.id].events]
    assert stored.count("compact/summary") == 1
    assert list(model.requests[-1].messages) == [*history, UserMessage(content="next")]
    start = next(e for e in events if e.type == "compact/start")
    assert start.data["reason"] == "manual" and "turn" not in start.data
    assert check_invariants(events) == []


async def test_compact_now_with_nothing_to_compact_logs_a_skip() -> None:
    model = ScriptedModel(["hi"], context_window=BIG)
    async with harness(model, summarizer()) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "hello")

        result = await compact_now(agent.agent)

        events = events_of(agent.session.events)
    assert result.outcome == "skipped" and not result.changed
    assert [e.type for e in events] == ["compact/start", "compact/end"]
    assert events[-1].data["error"]["code"] == "NOTHING"


async def test_compact_now_before_any_turn_logs_nothing() -> None:
    """A /compact typed first in a chat: logging the skip made a session of nothing
    else, which dsh-persistence stored and --continue took as the last one."""
    async with harness(ScriptedModel(["hi"], context_window=BIG), summarizer()) as h:
        agent = await h.agents.create("a", options=OPTIONS)

        result = await compact_now(agent.agent)

        events = list(agent.session.events)
    assert (result.outcome, result.error) == (
        "skipped",
        {"code": "NOTHING", "message": "nothing to compact"},
    )
    assert events == []


async def test_compact_now_works_when_automatic_compaction_is_off() -> None:
    options = {"model": "scripted", "compaction": {"model": "summarizer", "enabled": False}}
    model = ScriptedModel(reads(3), context_window=BIG)
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "task")

        result = await compact_now(agent)

    assert result.outcome == "summarized"


class CompactTool:
    """A ``compact`` tool that compacts the agent in the middle of its own call."""

    def __init__(self) -> None:
        self.results: list[Any] = []

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        from dsh.tools import tool

        @tool(name="compact")
        async def compact(context: Any) -> str:
            """Compact the history now."""
            self.results.append(await compact_now(context.agent))
            return "compacted"

        register(compact)


async def test_b44_compact_now_inside_a_step_never_separates_the_pending_call() -> None:
    tool = CompactTool()
    script = [*reads(3)[:-1], tool_calls(("compact", {})), "done"]
    model = ScriptedModel(script, context_window=BIG)
    async with harness(model, summarizer("mid-turn"), extra=[("tool", tool)]) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        events = await run_turn(agent, "task")
        history = list(agent.session.history)

    (result,) = tool.results
    assert result.outcome == "summarized"
    types = [e.type for e in events]
    # logged between the compact call and its result, inside the step
    assert types.index("tool/call", types.index("compact/start") - 1) < types.index("compact/end")
    assert types.index("compact/end") < len(types) - types[::-1].index("tool/result")
    last_call = history[-3]
    assert [c.name for c in last_call.tool_calls] == ["compact"]
    assert history[-2].content == "compacted"
    assert pairing_problems(history) == []
    assert list(model.requests[-1].messages) == history[:-1]
    assert check_invariants(agent.session.events) == []


async def test_compact_now_refuses_a_disposed_agent() -> None:
    async with harness(ScriptedModel([]), summarizer()) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await agent.dispose()

        with pytest.raises(DshError, match="disposed"):
            await compact_now(agent)


@pytest.mark.parametrize(
    ("outcome", "error", "said"),
    [
        ("summarized", None, "the history was summarised (~12,000 → ~3,000 tokens)"),
        ("pruned", None, "old tool results were pruned (~12,000 → ~3,000 tokens)"),
        (  # too-large results stubbed, then the summary of the rest failed
            "pruned",
            {"code": "SUMMARY_NOT_SMALLER", "message": "the summary was not smaller"},
            "old tool results were pruned (~12,000 → ~3,000 tokens), but compacting the rest "
            "failed (SUMMARY_NOT_SMALLER: the summary was not smaller)",
        ),
        ("skipped", None, "nothing to compact (~12,000 tokens)"),
        ("aborted", None, "aborted; the history is unchanged"),
        (
            "failed",
            {"code": "SUMMARY_NOT_SMALLER", "message": "the summary was not smaller"},
            "failed, the history is unchanged (SUMMARY_NOT_SMALLER: the summary was not smaller)",
        ),
    ],
)
def test_a_result_reads_as_one_sentence(
    outcome: Any, error: dict[str, str] | None, said: str
) -> None:
    """What chat's /compact prints (it was the dataclass repr)."""
    from dsh_compaction import CompactionResult

    assert str(CompactionResult(outcome, "manual", 12_000, 3_000, error)) == said


def test_a_summary_cut_off_by_its_output_limit_says_so() -> None:
    from dsh_compaction import CompactionResult

    result = CompactionResult("summarized", "manual", 12_000, 3_000, summary="s", truncated=True)
    assert str(result) == (
        "the history was summarised (~12,000 → ~3,000 tokens) "
        "(summary cut off at max_summary_tokens)"
    )
