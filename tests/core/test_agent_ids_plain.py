"""Ids given as a subclass of ``str`` (an ``enum.StrEnum`` member, a program's own id
type) pass ``agents.create``'s type check; they are taken as plain ``str`` there, and
by ``resume``, ``resume_stored``, ``fork`` and ``load_stored``, so that every store
sees plain text. Before, ``InMemoryPersistence`` refused the meta (its ``agent``) at
the first flush, while dsh-persistence stored it."""

from __future__ import annotations

import enum

import anyio
from loop_support import LIMIT

from dsh.testing import InMemoryPersistence, ScriptedModel, scripted_harness

OPTIONS = {"model": "scripted"}


class Agents(enum.StrEnum):
    MAIN = "main"
    OTHER = "other"


class Sessions(enum.StrEnum):
    FIRST = "first"
    FORKED = "forked"


def _plain(*values: object) -> bool:
    return all(type(value) is str for value in values)


async def test_a_str_enum_agent_and_session_id_are_stored_as_plain_str() -> None:
    store = InMemoryPersistence()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["ok"]), plugins=[store], load_entry_points=False
        ) as h:
            agent = await h.agents.create(Agents.MAIN, Sessions.FIRST, options=OPTIONS)
            assert _plain(agent.id, agent.session.id, agent.session.meta["agent"])
            result = await agent.prompt("hi")
            assert result.save_error is None
            assert h.agents.get("main") is agent
    stored = store.stored["first"]
    assert _plain(stored.id, stored.meta["agent"])


async def test_resume_fork_and_load_stored_take_str_enum_ids_as_plain_str() -> None:
    store = InMemoryPersistence()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["ok"]), plugins=[store], load_entry_points=False
        ) as h:
            agent = await h.agents.create("main", "first", options=OPTIONS)
            await agent.prompt("hi")
            await agent.dispose()
        async with scripted_harness(
            ScriptedModel(["a", "b", "c"]), plugins=[store], load_entry_points=False
        ) as h:
            loaded = await h.agents.load_stored(Sessions.FIRST)
            assert _plain(loaded.id)
            again = await h.agents.resume(Agents.MAIN, Sessions.FIRST)
            assert _plain(again.id, again.session.id)
            assert (await again.prompt("more")).save_error is None
            await again.dispose()
            fork = await h.agents.fork(Agents.OTHER, Sessions.FIRST, 1, Sessions.FORKED)
            assert _plain(fork.id, fork.session.id)
            assert (await fork.prompt("on")).save_error is None
            await fork.dispose()
            stored = await h.agents.load_stored("first")
            third = await h.agents.resume_stored(Agents.MAIN, stored)
            assert _plain(third.id)
    assert sorted(store.stored) == ["first", "forked"]
