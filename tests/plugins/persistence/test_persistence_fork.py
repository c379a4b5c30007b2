"""``harness.agents.fork``: an agent on a new session seeded with a stored session up to
the end of one of its turns (the journey review forked with three undocumented calls,
and a fork onto a stored id was refused as "changed since it was loaded")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh import DshError
from dsh.invariants import check_invariants
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import PersistencePlugin, PersistenceSettings

pytestmark = pytest.mark.plugins("persistence")


def users(request: Any) -> list[str]:
    return [
        m.content if isinstance(m.content, str) else m.content[0].text
        for m in request.messages
        if m.role == "user"
    ]


async def test_a_fork_goes_on_from_a_turn_and_leaves_its_source_as_it_was(
    settings: PersistenceSettings,
) -> None:
    model = ScriptedModel([text("one"), text("two"), text("three"), text("again")])
    plugin = PersistencePlugin(settings)
    try:
        async with scripted_harness(
            model, plugins=[("persistence", plugin)], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            for prompt in ("first", "second", "third"):
                await run_turn(agent, prompt)
            source, length = agent.session.id, len(agent.session.events)
            await agent.dispose()

            with pytest.raises(DshError, match=f"session {source!r} has no finished turn 4"):
                await h.agents.fork("b", source, 4)
            with pytest.raises(DshError, match="it is stored already"):
                await h.agents.fork("b", source, 1, new_session_id=source)
            assert h.agents.list() == []

            fork = await h.agents.fork("b", source, 1, new_session_id="branch")
            assert fork.session.meta["parent"] == source
            assert fork.agent.options["model"] == "scripted"  # the source's options
            await run_turn(fork, "instead")
            assert users(model.requests[-1]) == ["first", "instead"]
            await fork.dispose()
            stored = await h.agents.load_stored("branch")
            kept = await h.agents.load_stored(source)
        check_invariants(stored.events)
        cut = next(e.seq for e in kept.events if e.type == "turn/end") + 1
        assert stored.meta["seed_length"] == cut and stored.meta["parent"] == source
        assert [e.data for e in stored.events[:cut]] == [e.data for e in kept.events[:cut]]
        assert [e.data["turn"] for e in stored.events if e.type == "turn/end"] == [1, 2]
        assert len(kept.events) == length
    finally:
        plugin.close()


async def test_a_forks_title_has_the_keys_its_source_was_typed_with_hidden(
    settings: PersistenceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The title a store makes of a fork's first prompt: the fork is a new session, its
    copied events cleared of the keys dsh holds now (its source was stored when the key
    was none dsh knew). Was: the source's, key and all."""
    key = "sk-test-Qw3rTy7uI9oP1aS2dF4gH6jK8lZ0xC5vB7nM9q1W"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    plugin = PersistencePlugin(settings)
    try:
        model = ScriptedModel([text("one")])
        async with scripted_harness(
            model, plugins=[("persistence", plugin)], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            await run_turn(agent, f"my key {key}")
            await agent.dispose()
        monkeypatch.setenv("OPENAI_API_KEY", key)
        model = ScriptedModel([text("two")])
        async with scripted_harness(
            model, plugins=[("persistence", plugin)], load_entry_points=False
        ) as h:
            fork = await h.agents.fork("b", agent.session.id, 1, new_session_id="branch")
            await run_turn(fork, "more")
            await fork.dispose()
            store = await h.relay.session_persistence()
            assert store is not None
            titles = {header.id: header.title for header in await store.list()}
        assert titles == {agent.session.id: f"my key {key}", "branch": "my key ***"}
    finally:
        plugin.close()


async def test_a_fork_records_its_agents_workspace(
    settings: PersistenceSettings, tmp_path: Path
) -> None:
    """The fork's seed is told to ``session_event`` as the session goes live, before
    the agent is created (which says where it works). Was: the writer that telling made
    recorded the process's directory as the fork's."""
    place = tmp_path / "elsewhere"
    place.mkdir()
    plugin = PersistencePlugin(settings)
    try:
        model = ScriptedModel([text("one"), text("two")])
        async with scripted_harness(
            model, plugins=[("persistence", plugin)], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            await run_turn(agent, "first")
            await agent.dispose()
            fork = await h.agents.fork("b", agent.session.id, 1, "branch", workspace=place)
            await run_turn(fork, "more")
            await fork.dispose()
            store = await h.relay.session_persistence()
            assert store is not None
            where = {header.id: header.workspace for header in await store.list()}
        assert where["branch"] == str(place.resolve())
    finally:
        plugin.close()


async def test_a_fork_of_a_long_session_is_stored_as_its_sources_prefix(
    any_store: PersistenceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seed, told to ``session_event`` as the fork goes live (each ``user/message``
    of it asking for a checkpoint: merged into the one asked for), is written by a
    checkpoint, not one per prompt, and stored as its source logged it, byte for byte."""
    from dsh_persistence._writer import SessionWriter

    turns = 60
    writes: list[str] = []
    write = SessionWriter.write

    def counted(self: SessionWriter, durable: bool) -> None:
        writes.append(self.session.id)
        write(self, durable)

    monkeypatch.setattr(SessionWriter, "write", counted)
    model = ScriptedModel([text(f"answer {n}") for n in range(turns)] + [text("more")])
    plugin = PersistencePlugin(any_store)
    try:
        async with scripted_harness(
            model, plugins=[("persistence", plugin)], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            for n in range(turns):
                await run_turn(agent, f"prompt {n}")
            await agent.dispose()
            fork = await h.agents.fork("b", agent.session.id, turns - 1, "branch")
            for _ in range(200):  # the seed's checkpoint, written by its thread
                if "branch" in writes:
                    break
                await anyio.sleep(any_store.checkpoint_delay)
            assert "branch" in writes
            await anyio.sleep(any_store.checkpoint_delay * 4)
            # one (a slow machine may take longer than the delay to log the seed: then
            # one per delay), far from one per prompt
            assert writes.count("branch") <= turns // 4
            await run_turn(fork, "more")
            assert users(model.requests[-1])[-2:] == [f"prompt {turns - 2}", "more"]
            await fork.dispose()
            stored = await h.agents.load_stored("branch")
            kept = await h.agents.load_stored(agent.session.id)
        cut = stored.meta["seed_length"]
        assert [e.to_json() for e in stored.events[:cut]] == [
            e.to_json() for e in kept.events[:cut]
        ]
        assert [e.data["turn"] for e in stored.events if e.type == "turn/end"] == list(
            range(1, turns + 1)
        )
        check_invariants(stored.events)
    finally:
        plugin.close()


async def test_a_resume_whose_closers_are_logged_records_its_agents_workspace(
    tmp_path: Path,
) -> None:
    """As for a fork: the closers of a last turn a crash left open are told to
    ``session_event`` before the agent is created. Was: the process's directory."""
    settings = PersistenceSettings(backend="jsonl", directory=tmp_path / "sessions")
    place = tmp_path / "elsewhere"
    place.mkdir()
    plugin = PersistencePlugin(settings)
    try:
        model = ScriptedModel([text("one"), text("two")])
        async with scripted_harness(
            model, plugins=[("persistence", plugin)], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            await run_turn(agent, "first")
            await agent.dispose()
            (path,) = (tmp_path / "sessions").rglob("*.jsonl")
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            path.write_text("".join(lines[:-2]), encoding="utf-8")  # step/end, turn/end lost
            again = await h.agents.resume("b", agent.session.id, workspace=place)
            assert again.session.events[-1].data["reason"] == "interrupted"
            await run_turn(again, "more")
            await again.dispose()
            store = await h.relay.session_persistence()
            assert store is not None
            (header,) = await store.list()
        assert header.workspace == str(place.resolve())
    finally:
        plugin.close()
