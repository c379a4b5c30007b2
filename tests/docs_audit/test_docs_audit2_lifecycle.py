"""docs/hooks.md on the session and lifecycle hooks: the claim/release contract of
`session_persistence`, when `session_flush`, `agent_status`, `agent_disposed` and
`harness_stopping` fire."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh import DshError, hookimpl
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness


@pytest.fixture(autouse=True)
def _sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", str(tmp_path / "sessions"))


class Claiming(InMemoryPersistence):
    """InMemoryPersistence with the optional claim/release pair, recording the calls."""

    def __init__(self, refuse: bool = False) -> None:
        super().__init__()
        self.refuse = refuse
        self.calls: list[tuple[str, str]] = []

    async def claim(self, session_id: str, events: Any = ()) -> None:
        self.calls.append(("claim", session_id))
        if self.refuse:
            raise DshError(f"session {session_id} is continued by process 42")

    async def release(self, session_id: str) -> None:
        self.calls.append(("release", session_id))


async def stored_session(store: InMemoryPersistence) -> str:
    async with scripted_harness(
        ScriptedModel(["first"]), plugins=[store], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
        return agent.session.id


async def test_a_refused_claim_fails_the_resume_before_any_model_call() -> None:
    """hooks.md:453-456: "`agents.resume` then claims the session before the agent starts
    (raise a `DshError` saying so when another process continues it; the resume fails with
    it, before any model call)"."""
    store = Claiming()
    session_id = await stored_session(store)
    assert store.calls == [("claim", session_id)]  # as it was created (its plugin releases)
    store.calls.clear()
    store.refuse = True
    model = ScriptedModel(["never"])
    async with scripted_harness(model, plugins=[store], load_entry_points=False) as h:
        with pytest.raises(DshError, match="continued by process 42"):
            await h.agents.resume("b", session_id, options={"model": "scripted"})
        assert h.agents.get("b") is None
    assert model.requests == [] and store.calls == [("claim", session_id)]


async def test_a_claimed_session_is_released_when_its_agent_cannot_start() -> None:
    """hooks.md:456-457: "and releases it if the agent cannot start"."""

    class CallerGone(Claiming):
        """Its claim succeeds as the caller is cancelled: the agent cannot start (bad
        options and a live session are refused before the claim)."""

        scope: anyio.CancelScope | None = None

        async def claim(self, session_id: str, events: Any = ()) -> None:
            await super().claim(session_id, events)
            if self.scope is not None:
                self.scope.cancel()

    store = CallerGone()
    session_id = await stored_session(store)
    async with scripted_harness(ScriptedModel(), plugins=[store], load_entry_points=False) as h:
        with anyio.CancelScope() as store.scope:
            await h.agents.resume("c", session_id, {"model": "scripted"})
        assert store.scope.cancelled_caught and h.agents.get("c") is None
    mine = [call for call in store.calls if call[1] == session_id]
    assert mine[-2:] == [("claim", session_id), ("release", session_id)]


async def test_resuming_without_a_persistence_plugin_says_one_is_missing() -> None:
    """hooks.md:460-461: "When no plugin answers, resuming fails with an error that says a
    persistence plugin is missing"."""
    async with scripted_harness(load_entry_points=False) as h:
        with pytest.raises(DshError, match="no persistence plugin is loaded"):
            await h.agents.resume("a", "some-session")


async def test_lifecycle_hooks_fire_in_the_documented_order() -> None:
    """hooks.md:428-429 (`session_flush`): "Awaited after every `turn/end` and when an agent
    is disposed"; hooks.md:586: statuses "`idle`, `running` or `disposed`"; hooks.md:635:
    `agent_disposed` "Fires once when an agent has been disposed and its loop has exited";
    hooks.md:525-526: `harness_stopping` "Fires once when a `Harness` stops, after every
    agent was disposed (and its session flushed)"; hooks.md:558-559: `source` is
    `"startup"` for an agent from `dsh.yml`, `"create"` for one made by code."""
    log: list[str] = []

    class Watch:
        @hookimpl
        def agent_created(self, agent: Any, source: str) -> None:
            log.append(f"created {agent.id} {source}")

        @hookimpl
        def agent_status(self, agent: Any, status: str) -> None:
            log.append(f"status {agent.id} {status}")

        @hookimpl
        def session_flush(self, session: Any) -> None:
            log.append(f"flush {session.events[-1].type}")

        @hookimpl
        def agent_disposed(self, agent: Any) -> None:
            log.append(f"disposed {agent.id}")

        @hookimpl
        def harness_stopping(self) -> None:
            log.append("stopping")

    config = (
        "models: {scripted: {provider: scripted}}\nagents:\n  - id: main\n    model: scripted\n"
    )
    model = ScriptedModel(["one", "two"])
    async with scripted_harness(
        model, plugins=[Watch()], load_entry_points=False, config_text=config
    ) as h:
        await h.agents.create("b", options={"model": "scripted"})
        await run_turn(h.agents.get("main"), "hi")
        await run_turn(h.agents.get("b"), "hi")
        log.append("leaving")
    ran = log[log.index("created b create") + 1 : log.index("leaving")]
    assert log[0] == "created main startup"
    assert ran.count("flush turn/end") == 2
    assert [line for line in ran if line.startswith("status main")] == [
        "status main running",
        "status main idle",
    ]
    stop = log[log.index("leaving") + 1 :]
    assert stop[-1] == "stopping" and stop.count("stopping") == 1
    for agent in ("main", "b"):
        assert stop.count(f"disposed {agent}") == 1
        assert stop.index(f"status {agent} disposed") < stop.index(f"disposed {agent}")
    assert stop.count("flush turn/end") == 2  # each agent's session flushed when disposed


async def test_claim_is_called_with_the_session_id_and_its_events_as_documented() -> None:
    """hooks.md and the ``SessionPersistence`` docstring: the optional claim is ``async
    claim(session_id, events)``, ``events`` the session's log so far (none for a new
    one); a store written to ``claim(id)`` alone would fail every create."""
    from dsh.persistence import SessionPersistence

    assert "claim(session_id, events)" in " ".join((SessionPersistence.__doc__ or "").split())
    seen: list[tuple[str, int]] = []

    class Strict(InMemoryPersistence):  # no default for events: the core must pass them
        async def claim(self, session_id: str, events: Any) -> None:
            seen.append((session_id, len(events)))

        async def release(self, session_id: str) -> None:
            pass

    store = Strict()
    session_id = await stored_session(store)
    async with scripted_harness(ScriptedModel(), plugins=[store], load_entry_points=False) as h:
        await h.agents.resume("b", session_id, options={"model": "scripted"})
    stored = await store.load(session_id)
    assert stored is not None and stored.events
    assert seen == [(session_id, 0), (session_id, len(stored.events))]
