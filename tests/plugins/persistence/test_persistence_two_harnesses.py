"""Two harnesses of one process, one plugin object (the entry point's), each with a
store of its own, each running an agent on the same session id: each session is
written to the store it was claimed in, and each dispose lets go of its own claim.

Before: the plugin kept one writer per session id, so the second harness's agent took
the first one's place. The first agent's later turns went to the second store and were
refused there (``SessionConflictError``: never saved, even after the second harness
stopped), and its dispose let go of nothing: its claim held until the last harness
stopped."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from dsh import hookimpl
from dsh.harness import Harness
from dsh.testing import ErrorRecorder, ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import PersistencePlugin, PersistenceSettings, open_backend

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10
PAIRS = ["jsonl+jsonl", "jsonl+sqlite", "sqlite+postgresql"]


@pytest.fixture(params=PAIRS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """The ``persistence:`` sections of the two harnesses: two stores, never one."""
    sections = []
    for n, backend in enumerate(request.param.split("+")):
        if backend == "postgresql":
            where = f"url: {request.getfixturevalue('pg_url')}"
        else:
            where = f"directory: {tmp_path / f'store{n}'}"
        sections.append(f"persistence:\n  backend: {backend}\n  {where}\n")
    return sections[0], sections[1]


def settings_of(section: str) -> PersistenceSettings:
    import yaml

    return PersistenceSettings(**yaml.safe_load(section)["persistence"])


def prompts(section: str, session_id: str = "s") -> list[str]:
    """The prompts the store of ``section`` holds for ``session_id``."""
    backend = open_backend(settings_of(section))
    try:
        loaded = backend.load(session_id)
    finally:
        backend.close()
    assert loaded is not None
    return [e.data["content"] for e in loaded.stored.events if e.type == "user/message"]


def claimed(section: str, session_id: str = "s") -> bool:
    """Whether someone holds the claim of ``session_id`` in the store of ``section``
    (tried from a backend of its own, and let go at once)."""
    backend = open_backend(settings_of(section))
    try:
        if not backend.claim(session_id):
            return True
        backend.release(session_id)
        return False
    finally:
        backend.close()


def harness(
    plugin: PersistencePlugin, errors: ErrorRecorder, section: str
) -> AbstractAsyncContextManager[Harness]:
    model = ScriptedModel([text("ok")] * 10)
    return scripted_harness(
        model,
        plugins=[("persistence", plugin), ("errors", errors)],
        load_entry_points=False,
        config_text=section,
    )


async def create(h: Harness) -> Any:
    return await h.agents.create("agent", session_id="s", options={"model": "scripted"})


async def serve(
    plugin: PersistencePlugin,
    errors: ErrorRecorder,
    section: str,
    stop: anyio.Event,
    stopped: anyio.Event,
    *,
    task_status: anyio.abc.TaskStatus[Harness],
) -> None:
    """A harness in a task of its own, until ``stop``: harnesses stop in any order."""
    async with harness(plugin, errors, section) as h:
        task_status.started(h)
        await stop.wait()
    stopped.set()


@pytest.mark.parametrize("stopped_first", [0, 1], ids=["first stops first", "second first"])
async def test_each_harness_stores_its_own_session_of_one_id_in_its_own_store(
    stores: tuple[str, str], stopped_first: int
) -> None:
    plugin, errors = PersistencePlugin(), ErrorRecorder()
    stop = [anyio.Event(), anyio.Event()]
    stopped = [anyio.Event(), anyio.Event()]
    going_on = 1 - stopped_first
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            run = (plugin, errors, stores[0], stop[0], stopped[0])
            a = await create(await tg.start(serve, *run))
            await run_turn(a, "A one")
            run = (plugin, errors, stores[1], stop[1], stopped[1])
            b = await create(await tg.start(serve, *run))
            await run_turn(b, "B one")
            await run_turn(a, "A two")
            await run_turn(b, "B two")
            # stopping one harness (its agent disposed) leaves the other's alone
            stop[stopped_first].set()
            await stopped[stopped_first].wait()
            assert not claimed(stores[stopped_first])
            assert claimed(stores[going_on])
            await run_turn([a, b][going_on], "C three")
            stop[going_on].set()
    assert not claimed(stores[going_on])
    assert errors.errors == [] and errors.failures == []
    assert prompts(stores[0]) == ["A one", "A two"] + ["C three"] * stopped_first
    assert prompts(stores[1]) == ["B one", "B two"] + ["C three"] * going_on


@pytest.mark.parametrize("order", [(0, 1), (1, 0)], ids=["first disposed first", "second"])
async def test_each_dispose_lets_go_of_its_own_claim_at_once(
    stores: tuple[str, str], order: tuple[int, int]
) -> None:
    plugin, errors = PersistencePlugin(), ErrorRecorder()
    with anyio.fail_after(LIMIT):
        async with harness(plugin, errors, stores[0]) as a_harness:
            a = await create(a_harness)
            async with harness(plugin, errors, stores[1]) as b_harness:
                agents = [a, await create(b_harness)]
                assert claimed(stores[0]) and claimed(stores[1])
                one, other = order
                await agents[one].dispose()
                assert not claimed(stores[one])
                assert claimed(stores[other])
                await run_turn(agents[other], "still saved")
                await agents[other].dispose()
                assert not claimed(stores[other])
    assert errors.errors == [] and errors.failures == []
    assert prompts(stores[other]) == ["still saved"]


async def test_new_sessions_go_to_the_store_of_the_harness_left_when_the_last_one_stops(
    stores: tuple[str, str],
) -> None:
    """For a caller that names no harness (``plugin.settings``), the last one started
    chooses the store, and once it stops, the one started before it again; each
    harness's own sessions are in its own store throughout. Before: the stopped
    harness's store, kept open."""
    plugin, errors = PersistencePlugin(), ErrorRecorder()
    with anyio.fail_after(LIMIT):
        async with harness(plugin, errors, stores[0]) as a_harness:
            async with harness(plugin, errors, stores[1]):
                assert plugin.settings == settings_of(stores[1])
            assert plugin.settings == settings_of(stores[0])
            a = await create(a_harness)
            await run_turn(a, "after the other stopped")
            assert claimed(stores[0]) and not claimed(stores[1])
    assert errors.errors == [] and errors.failures == []
    assert prompts(stores[0]) == ["after the other stopped"]


class Pause:
    """Holds up ``agent_created`` (before dsh-persistence's) until ``go``: the agent's
    session is claimed, the agent not yet created, as while a slower plugin's impl runs."""

    def __init__(self) -> None:
        self.reached = anyio.Event()
        self.go = anyio.Event()

    @hookimpl(tryfirst=True)
    async def agent_created(self, agent: Any) -> None:
        self.reached.set()
        await self.go.wait()


async def test_a_session_is_written_where_it_was_claimed_when_a_harness_starts_in_between(
    stores: tuple[str, str],
) -> None:
    """The claim is taken in the store current at the agent's creation; a harness that
    starts before the agent is created (another choice of store for new sessions) does
    not move it. Before: the writer, made at ``agent_created``, took the new harness's
    store: the session was written there, and its claim in the first store was let go
    only when the last harness stopped."""
    plugin, errors, pause = PersistencePlugin(), ErrorRecorder(), Pause()
    model = ScriptedModel([text("ok")] * 10)
    plugins = [("persistence", plugin), ("errors", errors), ("pause", pause)]
    made: list[Any] = []
    created = anyio.Event()

    async def create_first(h: Harness) -> None:
        made.append(await create(h))
        created.set()

    with anyio.fail_after(LIMIT):
        async with (
            scripted_harness(
                model, plugins=plugins, load_entry_points=False, config_text=stores[0]
            ) as first,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(create_first, first)
            await pause.reached.wait()  # claimed in the first store
            async with harness(plugin, errors, stores[1]):
                pause.go.set()
                await created.wait()
                await run_turn(made[0], "A one")
                assert claimed(stores[0]) and not claimed(stores[1])
            # the second harness stopped: the first store, with the claim, stays open
            assert claimed(stores[0])
            await run_turn(made[0], "A two")
            await made[0].dispose()
            assert not claimed(stores[0])
    assert errors.errors == [] and errors.failures == []
    assert prompts(stores[0]) == ["A one", "A two"]
    assert stored_ids(stores[1]) == []


def stored_ids(section: str) -> list[str]:
    backend = open_backend(settings_of(section))
    try:
        return [header.id for header in backend.headers()]
    finally:
        backend.close()
