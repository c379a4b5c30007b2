"""dsh-persistence in a chat backend (docs/persistence.md, docs/python.md): many users'
sessions stored at once, a user's session disposed and resumed later in the same
process and in a new harness, and two harnesses of one process on one store. Every
test runs once per backend (the ``settings`` fixture); nothing waits on time.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from dsh import DshError, HookError, hookimpl
from dsh.testing import ScriptedModel, check_invariants, scripted_harness, text
from dsh.turns import turns
from dsh_persistence import PersistencePlugin, SessionInUseError

pytestmark = pytest.mark.plugins("persistence")
GUARD = 20  # seconds: a hang guard only

USERS = 20


def harness_with(plugin: PersistencePlugin, *models: ScriptedModel, plugins: Any = ()) -> Any:
    return scripted_harness(
        *models, plugins=[("persistence", plugin), *plugins], load_entry_points=False
    )


async def test_many_users_stored_at_once_then_resumed_here_and_in_a_new_harness(
    settings: Any,
) -> None:
    plugin = PersistencePlugin(settings)
    first = [ScriptedModel([text(f"hello {i}")], name=f"m{i}") for i in range(USERS)]
    sessions: dict[str, str] = {}
    with anyio.fail_after(GUARD):
        async with harness_with(plugin, *first) as harness:
            agents = [
                await harness.agents.create(f"user{i}", options={"model": f"m{i}"})
                for i in range(USERS)
            ]
            results: dict[str, Any] = {}

            async def ask(agent: Any) -> None:
                results[agent.id] = await agent.prompt(f"I am {agent.id}")

            async with anyio.create_task_group() as tg:
                for agent in agents:
                    tg.start_soon(ask, agent)
            for agent in agents:
                result = results[agent.id]
                result.raise_for_error()  # saved, or NOT_SAVED
                sessions[agent.id] = agent.session.id
            # user0 leaves and comes back later in the same process
            await agents[0].dispose()
            first[0].extend(text("welcome back"))
            again = await harness.agents.resume("user0", sessions["user0"])
            assert again.options["model"] == "m0"  # the options it was created with
            result = await again.prompt("again")
            result.raise_for_error()
            assert (result.turn, result.text) == (2, "welcome back")

        second = [ScriptedModel([text(f"bye {i}")], name=f"m{i}") for i in range(USERS)]
        async with harness_with(plugin, *second) as harness:
            store = await harness.relay.session_persistence()
            assert store is not None
            listed = {header.id for header in await store.list()}
            assert set(sessions.values()) <= listed
            resumed = [
                await harness.agents.resume(uid, sid) for uid, sid in sorted(sessions.items())
            ]
            async with anyio.create_task_group() as tg:
                for agent in resumed:
                    tg.start_soon(agent.prompt, "bye")
        async with harness_with(plugin) as harness:  # a later look at the store
            store = await harness.relay.session_persistence()
            assert store is not None
            for uid, sid in sessions.items():
                loaded = await store.load(sid)
                assert loaded is not None
                assert check_invariants(loaded.events) == []
                done = turns(loaded.events)
                assert [t.turn for t in done] == ([1, 2, 3] if uid == "user0" else [1, 2])
                assert done[-1].reason == "completed"
                assert done[-1].text == f"bye {uid.removeprefix('user')}"


async def test_a_session_live_in_one_harness_is_refused_to_another_of_the_process(
    settings: Any,
) -> None:
    plugin = PersistencePlugin(settings)
    model = ScriptedModel([text("one"), text("two")])
    with anyio.fail_after(GUARD):
        async with harness_with(plugin, model) as a, harness_with(plugin, model) as b:
            alice = await a.agents.create("alice", options={"model": "scripted"})
            (await alice.prompt("hi")).raise_for_error()
            with pytest.raises(SessionInUseError):
                await b.agents.resume("alice", alice.session.id)
            with pytest.raises(DshError):  # and to another agent of the same harness
                await a.agents.resume("alice-2", alice.session.id)
            await alice.dispose()
            taken = await b.agents.resume("alice", alice.session.id)  # free once disposed
            (await taken.prompt("again")).raise_for_error()


class Broken:
    """A plugin whose start-up fails: a tenant's harness that cannot start."""

    @hookimpl
    def harness_started(self) -> None:
        raise RuntimeError("tenant config is broken")


async def test_a_harness_that_fails_to_start_leaves_the_claims_of_a_running_one(
    settings: Any,
) -> None:
    plugin = PersistencePlugin(settings)
    model = ScriptedModel([text("one")])
    with anyio.fail_after(GUARD):
        async with harness_with(plugin, model) as a:
            alice = await a.agents.create("alice", options={"model": "scripted"})
            (await alice.prompt("hi")).raise_for_error()
            with pytest.raises(HookError):
                async with harness_with(plugin, model, plugins=[("broken", Broken())]):
                    pass
            async with harness_with(plugin, model) as c:
                with pytest.raises(SessionInUseError):
                    await c.agents.resume("thief", alice.session.id)


async def test_two_tabs_creating_one_user_agent_at_once_get_one_agent(settings: Any) -> None:
    plugin = PersistencePlugin(settings)
    created: list[Any] = []
    refused: list[DshError] = []
    with anyio.fail_after(GUARD):
        async with harness_with(plugin, ScriptedModel([])) as harness:

            async def open_tab() -> None:
                try:
                    created.append(await harness.agents.create("alice"))
                except DshError as exc:
                    refused.append(exc)

            async with anyio.create_task_group() as tg:
                tg.start_soon(open_tab)
                tg.start_soon(open_tab)
            listed = harness.agents.list()
            for handle in created:  # what the harness would leave running, stopped here
                await handle.dispose()
    assert (len(created), len(refused), len(listed)) == (1, 1, 1)
