"""``keep_last_user_message`` keeps the turn's task: the prompt that opened the turn
(its ``user/message``), not merely the latest user message, which mid-turn is a
steering note (``steering/message``: ``steer()``, or a plugin's continuation
``reason``). The turn's steering is kept too while the task and it fit the tail
budget together, newest first."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import (
    WINDOW,
    answer,
    events_of,
    harness,
    options,
    reads,
    summarizer,
    summary_of,
)

from dsh import ContinuationDecision, UserMessage, hookimpl
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, check_invariants, run_turn
from dsh_compaction import SUMMARY_HEADER
from dsh_compaction._task import task_marks

pytestmark = pytest.mark.plugins("compaction")

TASK = "TASK: refactor module foo, keep the API"


class Nudge:
    """Steers the turn after the given steps (a continuation with a reason)."""

    def __init__(self, notes: dict[int, str]) -> None:
        self.notes = notes

    @hookimpl
    def agent_turn_continuation(self, step: int) -> ContinuationDecision | None:
        note = self.notes.get(step)
        return None if note is None else ContinuationDecision(action="continue", reason=note)


async def compacted(task: str, notes: dict[int, str], steps: int = 5, **settings: Any) -> Any:
    model = ScriptedModel(reads(steps), context_window=WINDOW)
    summariser = summarizer("summary", "summary 2")
    async with harness(model, summariser, extra=[("nudge", Nudge(notes))]) as h:
        agent = await h.agents.create("a", options=options(**settings))
        events = await run_turn(agent, task)
        assert check_invariants(agent.session.events) == []
        history = list(agent.session.history)
    outcomes = {e.data["outcome"] for e in events_of(events, "compact/end")}
    assert outcomes == {"summarized"}
    return history, events_of(events, "compact/summary"), model


def user(content: str) -> UserMessage:
    return UserMessage(content=content)


def users(history: list[Any]) -> list[str]:
    return [
        m.content
        for m in history
        if isinstance(m, UserMessage) and not m.content.startswith(SUMMARY_HEADER)
    ]


async def test_b44_the_turns_task_is_kept_not_just_the_latest_steering_note() -> None:
    history, _, model = await compacted(TASK, {2: "remember to run the tests"})

    assert history[0].content.startswith(SUMMARY_HEADER)
    assert users(history) == [TASK, "remember to run the tests"]  # both fit: both kept
    assert history[1] == UserMessage(content=TASK)
    transcript = model.requests[-1].messages  # the last step's request
    assert UserMessage(content=TASK) in transcript


async def test_b44_the_task_comes_first_when_task_and_steering_do_not_both_fit() -> None:
    task = "T" * 2000
    note = "N" * 1000  # 2000 + 1000 > the 2800 tokens of the tail budget
    history, summaries, _ = await compacted(task, {2: note})

    assert users(history) == [task]
    assert all(s.data["kept"] for s in summaries)  # the task, at every compaction


async def test_b44_the_newest_steering_is_kept_first() -> None:
    notes = {1: "a" * 500, 2: "b" * 500}
    history, _, _ = await compacted(TASK, notes, tail_tokens=800)

    # 800 tokens hold the task and one note: the newer
    assert users(history) == [TASK, "b" * 500]


async def test_b44_a_task_larger_than_the_tail_budget_is_not_kept_but_the_steering_is() -> None:
    history, _, _ = await compacted("T" * 3000, {2: "remember to run the tests"})

    assert users(history) == ["remember to run the tests"]


def log(*entries: tuple[str, str | None]) -> list[SessionEvent]:
    """Events of (type, content); a None content: no data."""
    return [
        SessionEvent(kind, seq, 0.0, {} if content is None else {"content": content})
        for seq, (kind, content) in enumerate(entries)
    ]


def test_task_marks_keeps_a_batch_of_prompts_and_only_the_latest_turns() -> None:
    history = [user("old task"), answer("a"), user("p1"), user("p2"), user("steer")]
    events = log(
        ("turn/start", None),
        ("user/message", "old task"),
        ("turn/start", None),
        ("user/message", "p1"),
        ("user/message", "p2"),
        ("steering/message", "steer"),
    )
    counts = [8, 1, 2, 2, 5]
    assert task_marks(events, history, counts, 100) == {2, 3, 4}
    assert task_marks(events, history, counts, 4) == {2, 3}  # prompts before steering
    assert task_marks(events, history, counts, 3) == {3}  # the newest prompt first


def test_task_marks_without_a_turn_in_the_log_keeps_the_latest_user_message() -> None:
    history = [summary_of("s"), user("u1"), answer("a"), user("u2"), answer("b")]
    counts = [1, 1, 1, 3, 1]
    assert task_marks([], history, counts, 3) == {3}
    assert task_marks([], history, counts, 2) == set()


def test_task_marks_skips_summaries_and_a_prompt_already_summarised() -> None:
    # the turn's prompt went into the previous summary: its steering is what is left
    history = [summary_of("p"), answer("a"), user("steer"), answer("b")]
    events = log(("turn/start", None), ("user/message", "p"), ("steering/message", "steer"))
    assert task_marks(events, history, [1, 1, 1, 1], 10) == {2}


def test_task_marks_keeps_only_the_newest_steering_note() -> None:
    # a plugin continuing every step with the same note: each compaction kept every
    # copy, so after it the history held a tail's worth of notes (the review of 9470b15)
    history = [user("task"), answer("a"), user("note"), answer("b"), user("note"), user("n2")]
    events = log(
        ("turn/start", None),
        ("user/message", "task"),
        ("steering/message", "note"),
        ("steering/message", "note"),
        ("steering/message", "n2"),
    )
    counts = [1, 1, 1, 1, 1, 1]
    assert task_marks(events, history, counts, 100) == {0, 5}
