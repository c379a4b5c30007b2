"""Behaviour 41 (the core's part): the closers the core logs for a last turn a backend's
``load`` returned open reach the ``session_event`` observers like any event.

Was: the core put them in the resumed session's log as it prepared it, so no observer
saw them. A persistence plugin that stores what ``session_event`` told it and writes it
in ``session_flush`` (docs/hooks.md's example) never stored them: its log had a gap
where they belong, and the next resume was refused ("seq 18 (turn/start): seq should be
16")."""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from loop_support import LIMIT, ends

from dsh import hookimpl
from dsh.harness import Harness
from dsh.persistence import StoredSession
from dsh.session import Session, SessionEvent
from dsh.testing import ScriptedModel, check_invariants, run_turn, scripted_harness, text


class EventStore:
    """docs/hooks.md's persistence plugin: collects events in ``session_event``, appends
    them to a JSONL file per session in ``session_flush``; its ``load`` returns the file
    as it is (no repair: the core closes an open turn)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pending: dict[str, list[str]] = {}
        self.told: list[tuple[int, str]] = []  # (seq, type) of every event observed

    def _tell(self, session: Session, event: SessionEvent) -> None:
        self.told.append((event.seq, event.type))
        self.pending.setdefault(session.id, []).append(event.to_json())

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        self._tell(session, event)

    @hookimpl
    async def session_flush(self, session: Session) -> None:
        if lines := self.pending.pop(session.id, []):
            with self.path(session.id).open("a", encoding="utf-8") as file:
                file.writelines(line + "\n" for line in lines)

    @hookimpl
    def session_persistence(self) -> EventStore:
        return self

    def path(self, session_id: str) -> Path:
        return self.root / f"{session_id}.jsonl"

    def events(self, session_id: str) -> list[SessionEvent]:
        lines = self.path(session_id).read_text(encoding="utf-8").splitlines()
        return [SessionEvent.from_dict(json.loads(line)) for line in lines]

    async def list(self) -> list[object]:
        return []

    async def load(self, session_id: str) -> StoredSession | None:
        if not self.path(session_id).exists():
            return None
        events = self.events(session_id)
        return StoredSession(session_id, events[0].time, events, {})

    async def delete(self, session_id: str) -> bool:
        return False


class SlowEventStore(EventStore):
    """``EventStore`` with an async ``session_event``: the core awaits each."""

    @hookimpl
    async def session_event(self, session: Session, event: SessionEvent) -> None:  # type: ignore[override]
        await anyio.lowlevel.checkpoint()
        self._tell(session, event)


def in_harness(
    model: ScriptedModel, store: EventStore, root: Path
) -> AbstractAsyncContextManager[Harness]:
    plugins = [("store", store)]
    return scripted_harness(model, plugins=plugins, load_entry_points=False, workspace=root)


@pytest.mark.parametrize("slow", [False, True], ids=["sync-observer", "async-observer"])
async def test_b41_an_event_store_stores_the_closers_and_resumes_again(
    tmp_path: Path, slow: bool
) -> None:
    store = EventStore(tmp_path)
    async with in_harness(ScriptedModel([text("one"), text("two")]), store, tmp_path) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
            await run_turn(agent, "second")
        sid = agent.session.id
    path = store.path(sid)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-2]), encoding="utf-8")  # turn 2's step/end, turn/end lost
    cut = len(lines) - 2

    store = (SlowEventStore if slow else EventStore)(tmp_path)
    async with in_harness(ScriptedModel([text("three")]), store, tmp_path) as h:
        resumed = await h.agents.resume("b", sid, options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(resumed, "third")
    live = list(resumed.session.events)
    # the closers told once, in order, ahead of the new turn; then stored with it
    assert store.told[:2] == [(cut, "step/end"), (cut + 1, "turn/end")]
    assert [seq for seq, _ in store.told] == list(range(cut, len(live)))
    stored = store.events(sid)
    assert [e.to_dict() for e in stored] == [e.to_dict() for e in live]
    assert check_invariants(stored) == []

    store = (SlowEventStore if slow else EventStore)(tmp_path)  # and the session resumes again
    async with in_harness(ScriptedModel([text("four")]), store, tmp_path) as h:
        again = await h.agents.resume("c", sid, options={"model": "scripted"})
        assert len(again.session.events) == len(live)  # nothing closed this time
        with anyio.fail_after(LIMIT):
            await run_turn(again, "fourth")
    assert store.told[0] == (len(live), "turn/start")
    stored = store.events(sid)
    assert check_invariants(stored) == []
    assert ends(stored) == [
        (1, "completed"),
        (2, "interrupted"),
        (3, "completed"),
        (4, "completed"),
    ]


@pytest.mark.parametrize("slow", [False, True], ids=["sync-observer", "async-observer"])
async def test_an_event_store_stores_a_forks_seed(tmp_path: Path, slow: bool) -> None:
    """Was: the fork was prepared with its seed, which no observer was told of: the
    store held the fork from its first new event on (seq 6), and could not load it."""
    store = (SlowEventStore if slow else EventStore)(tmp_path)
    model = ScriptedModel([text("one"), text("two"), text("three"), text("four")])
    async with in_harness(model, store, tmp_path) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
            await run_turn(agent, "second")
        source = list(agent.session.events)
        store.told.clear()
        fork = await h.agents.fork("f", agent.session.id, 1, options={"model": "scripted"})
        seed = len(fork.session.events)
        assert fork.agent.turns == 1
        # the seed told in order, each event as the source logged it, before the turn
        assert store.told == [(e.seq, e.type) for e in source[:seed]]
        with anyio.fail_after(LIMIT):
            await run_turn(fork, "third")
    live = [e.to_dict() for e in fork.session.events]
    assert live[:seed] == [e.to_dict() for e in source[:seed]]
    assert [e.to_dict() for e in store.events(fork.session.id)] == live
    assert ends(fork.session.events) == [(1, "completed"), (2, "completed")]
    # the fork's first request holds the seed's history (turn 1's prompt and answer),
    # as the source's second one did
    forked, second = model.requests[2].messages, model.requests[1].messages
    assert len(forked) == len(second) and forked[:-1] == second[:-1]
    assert [m.role for m in forked[-3:]] == ["user", "assistant", "user"]

    store = (SlowEventStore if slow else EventStore)(tmp_path)  # and the fork resumes
    async with in_harness(ScriptedModel([text("four")]), store, tmp_path) as h:
        again = await h.agents.resume("g", fork.session.id, options={"model": "scripted"})
        assert len(again.session.events) == len(live)
        with anyio.fail_after(LIMIT):
            await run_turn(again, "fourth")
    assert store.told[0] == (len(live), "turn/start")
    assert check_invariants(store.events(fork.session.id)) == []
