"""``compact_now`` while its agent is disposed: the compaction ends before the final
flush (``compact/end``, ``aborted``), so the stored log is balanced, and the caller is
told it was aborted, not that the history was summarised."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from compaction_util import harness, reads, summarizer

from dsh import hookimpl
from dsh.testing import InMemoryPersistence, ScriptedModel, check_invariants, hang, run_turn
from dsh_compaction import CompactionResult, compact_now

pytestmark = pytest.mark.plugins("compaction")

OPTIONS = {"model": "scripted", "compaction": {"model": "summarizer", "prune_chars": 0}}
BIG = 1_000_000  # no automatic compaction


class Started:
    """Sets ``started`` as a compaction starts (its summary then being written)."""

    def __init__(self) -> None:
        self.started = anyio.Event()

    @hookimpl
    def session_event(self, event: Any) -> None:
        if event.type == "compact/start":
            self.started.set()


def compact_types(events: Any) -> list[tuple[str, Any]]:
    return [(e.type, e.data.get("outcome")) for e in events if e.type.startswith("compact/")]


async def test_disposing_during_compact_now_ends_it_before_the_final_flush() -> None:
    store = InMemoryPersistence()
    seen = Started()
    model = ScriptedModel(reads(3), context_window=BIG)
    async with harness(model, summarizer(hang()), extra=[("mem", store), ("seen", seen)]) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task")
        before = list(agent.session.history)
        got: list[CompactionResult] = []

        async def manual() -> None:
            got.append(await compact_now(agent))

        async with anyio.create_task_group() as tg:
            tg.start_soon(manual)
            await seen.started.wait()
            await agent.dispose()
            # ended before dispose() returned
            assert [r.outcome for r in got] == ["aborted"]
        events = list(agent.session.events)
        session_id = agent.session.id

    assert list(agent.session.history) == before
    assert compact_types(events) == [("compact/start", None), ("compact/end", "aborted")]
    stored = store.stored[session_id].events
    assert compact_types(stored) == compact_types(events)
    assert check_invariants(stored) == []


async def test_disposing_while_compact_now_waits_for_the_lock_aborts_it() -> None:
    """A second ``compact_now`` waiting for the first: both end at disposal, nothing
    logged after it."""
    store = InMemoryPersistence()
    seen = Started()
    model = ScriptedModel(reads(3), context_window=BIG)
    async with harness(model, summarizer(hang()), extra=[("mem", store), ("seen", seen)]) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task")
        got: list[str] = []

        results: list[CompactionResult] = []

        async def manual() -> None:
            results.append(await compact_now(agent))
            got.append(results[-1].outcome)

        async with anyio.create_task_group() as tg:
            tg.start_soon(manual)
            await seen.started.wait()
            tg.start_soon(manual)
            await anyio.wait_all_tasks_blocked()  # the second waits for the lock
            await agent.dispose()
        assert got == ["aborted", "aborted"]  # both ended (each task has returned)
        # the second logged nothing: none of the first's tokens are its (the two may
        # return in either order on trio)
        tokens = sorted((r.tokens_before, r.tokens_after) for r in results)
        assert tokens[0] == (0, 0) and tokens[1][0] > 0
        events = list(agent.session.events)
        session_id = agent.session.id

    assert compact_types(events) == [("compact/start", None), ("compact/end", "aborted")]
    assert compact_types(store.stored[session_id].events) == compact_types(events)


class DisposeOn:
    """Disposes the agent from ``compact_now``'s own task, at its ``compact/start``: the
    disposal waits for it to end, and it for the disposal, until the grace runs out."""

    def __init__(self) -> None:
        self.handle: Any = None

    @hookimpl
    async def session_event(self, event: Any) -> None:
        if event.type == "compact/start" and self.handle is not None:
            handle, self.handle = self.handle, None
            await handle.dispose()


async def test_compact_now_that_outlives_the_disposal_grace_is_not_told_summarized(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its summary and ``compact/end`` come after the final flush (only ``compact/start``
    is stored): the guarantee is bounded by the grace, and the caller is told so."""
    import dsh._grace

    monkeypatch.setattr(dsh._grace, "GRACE_SECONDS", 0.2)
    store, disposer = InMemoryPersistence(), DisposeOn()
    model = ScriptedModel(reads(3), context_window=BIG)
    extra = [("mem", store), ("d", disposer)]
    async with harness(model, summarizer("Goal: s"), extra=extra) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "task")
        disposer.handle = agent
        result = await compact_now(agent)
        session_id = agent.session.id

    assert compact_types(store.stored[session_id].events) == [("compact/start", None)]
    assert result.outcome == "aborted"
    assert result.error is not None and result.error["code"] == "NOT_SAVED"
    assert "not saved" in str(result)


class SlowStart:
    """An observer that holds the disposal past its grace right after ``compact/start``:
    until the disposal's final flush to ``store`` is done, before any summary."""

    def __init__(self, store: InMemoryPersistence) -> None:
        self.started = anyio.Event()
        self.store = store

    @hookimpl
    async def session_event(self, event: Any) -> None:
        if event.type == "compact/start":
            flushes = self.store.flushes
            self.started.set()
            with anyio.fail_after(30, shield=True):
                while self.store.flushes == flushes:  # noqa: ASYNC110 - no event for it
                    await anyio.sleep(0.01)


async def test_compact_now_cut_before_its_summary_is_told_not_saved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Outliving the grace before its summary: its ``compact/end`` came after the final
    flush, yet it returned ``aborted`` without the ``NOT_SAVED`` the docs promise."""
    import dsh._grace

    monkeypatch.setattr(dsh._grace, "GRACE_SECONDS", 0.2)
    store = InMemoryPersistence()
    slow = SlowStart(store)
    model = ScriptedModel(reads(3), context_window=1_000_000)
    options = {"model": "scripted", "compaction": {"model": "summarizer", "prune_chars": 0}}
    async with harness(model, summarizer(hang()), extra=[("mem", store), ("s", slow)]) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "task")
        got: list[Any] = []

        async def manual() -> None:
            got.append(await compact_now(agent))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(manual)
                await slow.started.wait()
                await agent.dispose()
    assert got[0].outcome == "aborted"
    assert got[0].error is not None and got[0].error["code"] == "NOT_SAVED"
