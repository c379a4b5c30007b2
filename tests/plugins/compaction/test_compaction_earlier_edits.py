"""A plugin whose ``agent_request`` runs before compaction's (``tryfirst`` too) and
changes the request's messages: compaction carries the change onto the compacted
request, or, when the change was in the part of the history it compacted, says so
(docs/compaction.md, "A plugin that changes the request's messages")."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import WINDOW, events_of, harness, options, reads, summarizer, summary_of

from dsh import Message, ModelRequest, UserMessage, hookimpl
from dsh.testing import ScriptedModel, run_turn
from dsh_compaction._edits import carry_edit

pytestmark = pytest.mark.plugins("compaction")


class Note:
    """``tryfirst``, registered after compaction: its impl runs before compaction's and
    puts a note at the end (``at_start``: at the start) of the request's messages."""

    def __init__(self, size: int = 100, *, at_start: bool = False) -> None:
        self.note = UserMessage(content="n" * size)
        self.at_start = at_start

    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        messages = request.messages
        both = (self.note, *messages) if self.at_start else (*messages, self.note)
        return request.model_copy(update={"messages": both})


class Rewrite:
    """``tryfirst``: rewrites the task, the history's first message."""

    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        first = UserMessage(content="the task, rewritten")
        return request.model_copy(update={"messages": (first, *request.messages[1:])})


async def compacted_turn(plugin: object, name: str) -> tuple[list[Any], ScriptedModel]:
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer("sum"), extra=[(name, plugin)]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
    assert events[-1].data["reason"] == "completed"
    return events, model


@pytest.mark.parametrize("at_start", [False, True])
async def test_a_note_an_earlier_plugin_adds_is_in_the_compacted_request(at_start: bool) -> None:
    note = Note(at_start=at_start)
    events, model = await compacted_turn(note, "note")

    (end,) = events_of(events, "compact/end")
    assert (end.data["outcome"], end.data["step"]) == ("summarized", 6)
    sent = list(model.requests[5].messages)
    assert sent.count(note.note) == 1
    if at_start:
        assert sent[:3] == [note.note, summary_of("sum"), UserMessage(content="task")]
    else:
        assert sent[:2] == [summary_of("sum"), UserMessage(content="task")]
        assert sent[-1] == note.note


async def test_a_change_an_earlier_plugin_makes_in_the_compacted_part_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    _, model = await compacted_turn(Rewrite(), "rewrite")

    assert model.requests[4].messages[0] == UserMessage(content="the task, rewritten")
    sent = list(model.requests[5].messages)
    # the rewritten task was in the compacted part: the request is the compacted history
    assert sent[:2] == [summary_of("sum"), UserMessage(content="task")]
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "dsh_compaction"]
    assert warning == (
        "agent 'a': the plugin 'rewrite', whose agent_request runs before compaction's, "
        "changed the request's messages in the part of the history that was compacted; "
        "the compacted request is sent without that change"
    )


class Looks:
    """``tryfirst``: looks at the request, changes nothing."""

    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> None:
        return None


async def test_with_several_plugins_before_compaction_the_warning_names_them_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Which of them changed the request cannot be known: compaction's impl gets the
    request as they all left it (docs/compaction.md)."""
    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel(reads(5), context_window=WINDOW)
    extra = [("rewrite", Rewrite()), ("looks", Looks())]
    async with harness(model, summarizer("sum"), extra=extra) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task")

    (warning,) = [r.getMessage() for r in caplog.records if r.name == "dsh_compaction"]
    assert warning.startswith(
        "agent 'a': one of the plugins whose agent_request runs before compaction's "
        "('looks', 'rewrite'; which one cannot be told) changed the request's messages"
    )


@pytest.mark.parametrize("size", [100, 6000])
async def test_an_earlier_plugins_note_is_kept_when_nothing_is_compacted(size: int) -> None:
    # 6000: the note puts the request over 0.8 of 7000, the history alone is not, and
    # there is nothing to compact: the request goes as the plugin made it
    note = Note(size)
    model = ScriptedModel(["fine"], context_window=WINDOW)
    async with harness(model, extra=[("note", note)]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    assert events_of(events) == []
    (sent,) = model.requests
    assert list(sent.messages) == [UserMessage(content="task"), note.note]


def m(text: str) -> Message:
    return UserMessage(content=text)


A, B, C, D, X, S = m("a"), m("b"), m("c"), m("d"), m("x"), m("summary")
OLD = [A, B, C, D]
NEW = [S, C, D]  # a and b summarised; c and d the tail, the very objects


@pytest.mark.parametrize(
    ("sent", "carried"),
    [
        ([A, B, C, D, X], [S, C, D, X]),  # appended
        ([A, B, C, X, D], [S, C, X, D]),  # inserted in the tail
        ([A, B, C], [S, C]),  # dropped from the tail
        ([A, B, X, D], [S, X, D]),  # replaced in the tail
        ([X, A, B, C, D], [X, S, C, D]),  # put before the history
        ([m("a"), B, C, D], None),  # replaced in the compacted part
        ([A, C, D], None),  # dropped from the compacted part
        ([A, B, X, C, D], [S, X, C, D]),  # inserted where the tail starts
    ],
)
def test_carry_edit(sent: list[Message], carried: list[Message] | None) -> None:
    result = carry_edit(OLD, sent, NEW)
    assert result is None if carried is None else [id(x) for x in result] == list(map(id, carried))


def test_carry_edit_without_a_change_is_the_new_history_itself() -> None:
    assert carry_edit(OLD, list(OLD), NEW) is NEW
    assert carry_edit(OLD, OLD, [S, m("c"), D]) == [S, C, D]  # equal is not the same
    assert carry_edit(OLD, [*OLD, X], [S, m("c"), D]) == [S, C, D, X]
