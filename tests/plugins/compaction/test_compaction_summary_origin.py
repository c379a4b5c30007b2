"""The previous summary is the message a ``compact/summary`` of the log made, not any
user message that starts with ``SUMMARY_HEADER``: a prompt that quotes the header (a
summary pasted from another session, say) is the turn's task, kept verbatim, and is
summarised as conversation, never merged as a summary. Replayed on resume alike."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import events_of, harness, options, reads, summarizer, summary_of

from dsh import Message, UserMessage, hookimpl
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn
from dsh_compaction import SUMMARY_HEADER, compact_now
from dsh_compaction._plan import last_user_message

pytestmark = pytest.mark.plugins("compaction")

PROMPT = SUMMARY_HEADER + "TASK: fix bug 123 in foo.py"


async def test_a_prompt_that_starts_with_the_header_is_the_task_not_a_summary() -> None:
    model = ScriptedModel(reads(5), context_window=7000)
    s = summarizer("Goal: reading files f0-f3 for the bug fix.")
    async with harness(model, s) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, PROMPT)
    summary = events_of(events, "compact/summary")[0]
    assert summary.data["merged_previous"] is False
    assert summary.data["kept"] == [0]  # the task, verbatim
    assert UserMessage(content=PROMPT) in model.requests[-1].messages
    assert "<previous-summary>" not in str(s.requests[0].messages)


async def test_after_a_resume_the_logged_summary_is_still_the_previous_one() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel(reads(5), context_window=7000)
    async with harness(model, summarizer("first summary"), extra=[("mem", store)]) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task")
        session_id = agent.session.id
    model = ScriptedModel(reads(5), context_window=7000)
    s = summarizer("second summary")
    async with harness(model, s, extra=[("mem", store)]) as h:
        agent = await h.agents.resume("a", session_id, options=options())
        assert agent.session.history[0] == summary_of("first summary")
        events = await run_turn(agent, "more")
    assert events_of(events, "compact/summary")[0].data["merged_previous"] is True


def test_the_latest_user_message_may_quote_the_header() -> None:
    """Only what comes before ``first`` (the logged summary) is not the user's."""
    quoted = UserMessage(content=PROMPT)
    assert last_user_message([quoted]) == 0
    assert last_user_message([summary_of("s"), quoted], first=1) == 1
    assert last_user_message([summary_of("s")], first=1) is None


class _Redact:
    """Another plugin's reducer that rewrites every user message (a redaction)."""

    @hookimpl
    def register_history_reducers(self, register: Any) -> None:
        def redact(history: list[Message], event: Any) -> list[Message]:
            return [
                m.model_copy(update={"content": m.content.replace("sk-123", "[redacted]")})
                if isinstance(m, UserMessage)
                else m
                for m in history
            ]

        register("redact/all", redact)


async def test_a_summary_another_plugins_reducer_rewrote_is_still_the_previous_one() -> None:
    s = summarizer("Goal: key sk-123 was used", "Goal: second")
    model = ScriptedModel([*reads(3), *reads(3)], context_window=10**6)
    async with harness(model, s, extra=[("r", _Redact())]) as h:
        agent = await h.agents.create("a", options=options(prune_chars=0))
        await run_turn(agent, "task")
        assert (await compact_now(agent)).outcome == "summarized"
        await agent.session.emit("redact/all", {})
        await run_turn(agent, "more")
        second = await compact_now(agent)
    assert second.outcome == "summarized"
    asked = s.requests[-1].messages[-1].content
    assert "<previous-summary>" in asked  # merged as the summary, not as conversation
    assert "Goal: key [redacted] was used" in asked
    assert SUMMARY_HEADER not in asked
