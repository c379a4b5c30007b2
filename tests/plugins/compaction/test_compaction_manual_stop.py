"""``/compact`` stopped (Ctrl-C in chat): what it says is true. Once the summary is
logged, the rest of the command (its ``compact/end``, the flush) is not stopped
halfway: chat shows the result, never "the history is as it was" for a history that
was summarised. A ``/compact`` stopped while the summary is written logs
``compact/end`` (``aborted``) and flushes it, as a finished one does."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from compaction_util import harness, reads, summarizer

import dsh_compaction
from dsh import hookimpl
from dsh._cli_chat_commands import run_command
from dsh.testing import ScriptedModel, hang, run_turn

pytestmark = pytest.mark.plugins("compaction")
OPTIONS = {"model": "scripted", "compaction": {"model": "summarizer", "prune_chars": 0}}


def compact_command() -> Any:
    found: list[Any] = []
    dsh_compaction.register_chat_commands(found.append)
    return found[0]


class Flushes:
    """Counts flushes, with the events logged when each began; ``stop``: Ctrl-C (the
    chat command's scope cancelled) during the next one."""

    def __init__(self) -> None:
        self.scopes: list[anyio.CancelScope] = []
        self.logged: list[list[str]] = []
        self.stopped_finished = False
        self.stop = False
        self.session: Any = None

    @hookimpl
    async def session_flush(self, session: Any) -> None:
        self.logged.append([e.type for e in session.events])
        stopping, self.stop = self.stop, False
        if stopping:
            self.scopes[0].cancel()
        await anyio.lowlevel.checkpoint()
        self.stopped_finished = self.stopped_finished or stopping


class StopOnStart:
    """Ctrl-C as the compaction starts (the summary then being written)."""

    def __init__(self, flushes: Flushes) -> None:
        self.flushes = flushes
        self.armed = False

    @hookimpl
    def session_event(self, event: Any) -> None:
        if event.type == "compact/start" and self.armed:
            self.armed = False
            self.flushes.scopes[0].cancel()


async def test_a_stop_during_the_flush_after_the_summary_shows_the_result(
    capsys: pytest.CaptureFixture[str],
) -> None:
    flushes = Flushes()
    model = ScriptedModel([*reads(3), "next"], context_window=100_000)
    async with harness(model, summarizer("by hand"), extra=[("f", flushes)]) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task")
        before = len(agent.session.history)
        capsys.readouterr()
        flushes.stop = True
        context: Any = SimpleNamespace(agent=agent, text="", harness=h)
        stops: list[str] = []
        failures: list[str] = []
        await run_command(
            "compaction", compact_command(), context, flushes.scopes, failures.append, stops.append
        )
        after = len(agent.session.history)
    assert after < before  # summarised
    assert flushes.stopped_finished  # the flush was not stopped halfway
    assert flushes.logged[-1][-1] == "compact/end"
    assert stops == [] and failures == []  # not "the history is as it was"
    assert "/compact: " in capsys.readouterr().err


async def test_a_stop_while_the_summary_is_written_flushes_the_aborted_compaction() -> None:
    flushes = Flushes()
    stopper = StopOnStart(flushes)
    model = ScriptedModel([*reads(3), "next"], context_window=100_000)
    extra = [("f", flushes), ("s", stopper)]
    async with harness(model, summarizer(hang()), extra=extra) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task")
        before = list(agent.session.history)
        flushed = len(flushes.logged)
        stopper.armed = True
        context: Any = SimpleNamespace(agent=agent, text="", harness=h)
        stops: list[str] = []
        await run_command(
            "compaction", compact_command(), context, flushes.scopes, print, stops.append
        )
        assert list(agent.session.history) == before
        assert stops == ["  /compact: stopped; the history is as it was (Ctrl-C again to quit)"]
        # flushed at once, not when the harness closes
        assert len(flushes.logged) == flushed + 1
        assert flushes.logged[-1][-2:] == ["compact/start", "compact/end"]
        ends = [e for e in agent.session.events if e.type == "compact/end"]
        assert ends[-1].data["outcome"] == "aborted"


class StopOnSummary:
    """Ctrl-C as an async observer sees the summary logged (the core runs async
    observers shielded, and nothing after them in ``compact_now`` checkpoints before
    the flush, shielded: the stop is not seen)."""

    def __init__(self, flushes: Flushes) -> None:
        self.flushes = flushes

    @hookimpl
    async def session_event(self, event: Any) -> None:
        if event.type == "compact/summary":
            self.flushes.scopes[0].cancel()
            await anyio.lowlevel.checkpoint()


async def test_a_stop_as_the_summary_is_logged_shows_the_result(
    capsys: pytest.CaptureFixture[str],
) -> None:
    flushes = Flushes()
    model = ScriptedModel([*reads(3), "next"], context_window=100_000)
    extra = [("f", flushes), ("s", StopOnSummary(flushes))]
    async with harness(model, summarizer("by hand"), extra=extra) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task")
        before = len(agent.session.history)
        capsys.readouterr()
        context: Any = SimpleNamespace(agent=agent, text="", harness=h)
        stops: list[str] = []
        await run_command(
            "compaction", compact_command(), context, flushes.scopes, print, stops.append
        )
        assert len(agent.session.history) < before
        assert stops == []
        ends = [e for e in agent.session.events if e.type == "compact/end"]
        assert ends[-1].data["outcome"] == "summarized"
        assert flushes.logged[-1][-1] == "compact/end"
