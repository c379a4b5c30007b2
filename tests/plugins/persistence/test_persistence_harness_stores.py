"""Two harnesses of one process share the entry point's plugin object, each with a
``persistence:`` section of its own: each harness's sessions are created in, resumed
from and listed from the store its own config chose, whatever harness starts or stops
in between (``session_persistence`` is asked with the harness that asks).

Before: the plugin could not tell which harness asked, so the last one started chose
the store for every one of them: an agent created in the first harness after the second
started was written to the second's store, resuming in the first read the second's
store (its own sessions were "not stored"), and ``dsh sessions``-style listings of both
showed the second's."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import anyio.abc
import pytest

from dsh import DshError
from dsh.harness import Harness
from dsh.testing import ErrorRecorder, ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import PersistencePlugin, PersistenceSettings, open_backend

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10
OPTIONS = {"model": "scripted"}


@pytest.fixture(params=["jsonl+jsonl", "jsonl+sqlite"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """The ``persistence:`` sections of the two harnesses: two stores, never one."""
    backends = request.param.split("+")
    return tuple(  # type: ignore[return-value]
        f"persistence:\n  backend: {backend}\n  directory: {tmp_path / f'store{n}'}\n"
        for n, backend in enumerate(backends)
    )


def stored_ids(section: str) -> list[str]:
    import yaml

    backend = open_backend(PersistenceSettings(**yaml.safe_load(section)["persistence"]))
    try:
        return sorted(header.id for header in backend.headers())
    finally:
        backend.close()


def harness(
    plugin: PersistencePlugin, errors: ErrorRecorder, section: str
) -> AbstractAsyncContextManager[Harness]:
    return scripted_harness(
        ScriptedModel([text("ok")] * 10),
        plugins=[("persistence", plugin), ("errors", errors)],
        load_entry_points=False,
        config_text=section,
    )


async def saved(h: Harness, session_id: str) -> None:
    """A session ``session_id`` run for one turn in ``h`` and disposed (so stored)."""
    agent = await h.agents.create(f"agent-{session_id}", session_id=session_id, options=OPTIONS)
    await run_turn(agent, f"in {session_id}")
    await agent.dispose()


async def listed(h: Harness) -> list[str]:
    service = await h.relay.session_persistence(h)
    assert service is not None
    return sorted(header.id for header in await service.list())


async def test_each_harness_creates_resumes_and_lists_in_its_own_store(
    stores: tuple[str, str],
) -> None:
    plugin, errors = PersistencePlugin(), ErrorRecorder()
    with anyio.fail_after(LIMIT):
        async with harness(plugin, errors, stores[0]) as a, harness(plugin, errors, stores[1]) as b:
            await saved(a, "made-in-a")  # after b started: b chose the store last
            await saved(b, "made-in-b")
            assert stored_ids(stores[0]) == ["made-in-a"]
            assert stored_ids(stores[1]) == ["made-in-b"]
            assert await listed(a) == ["made-in-a"]
            assert await listed(b) == ["made-in-b"]
            resumed = await a.agents.resume("again-a", "made-in-a")
            await run_turn(resumed, "resumed in a")
            await resumed.dispose()
            with pytest.raises(DshError, match="'made-in-b': it is not stored"):
                await a.agents.resume("not-a", "made-in-b")
            with pytest.raises(DshError, match="'made-in-a': it is not stored"):
                await b.agents.resume("not-b", "made-in-a")
            resumed = await b.agents.resume("again-b", "made-in-b")
            await resumed.dispose()
    assert errors.errors == [] and errors.failures == []
    assert stored_ids(stores[0]) == ["made-in-a"]
    assert stored_ids(stores[1]) == ["made-in-b"]


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


@pytest.mark.parametrize("stops", [0, 1], ids=["first started stops", "last started stops"])
async def test_a_harness_keeps_its_store_when_the_other_stops(
    stores: tuple[str, str], stops: int
) -> None:
    """Its agent running meanwhile, and its sessions created after."""
    plugin, errors = PersistencePlugin(), ErrorRecorder()
    stop, stopped = [anyio.Event(), anyio.Event()], [anyio.Event(), anyio.Event()]
    stays = 1 - stops
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            both = [
                await tg.start(serve, plugin, errors, stores[n], stop[n], stopped[n])
                for n in (0, 1)
            ]
            left = both[stays]
            running = await left.agents.create("running", session_id="running", options=OPTIONS)
            await run_turn(running, "before")
            stop[stops].set()
            await stopped[stops].wait()
            await run_turn(running, "after")
            await saved(left, "after-the-stop")
            assert await listed(left) == ["after-the-stop", "running"]
            await running.dispose()
            stop[stays].set()
    assert errors.errors == [] and errors.failures == []
    assert stored_ids(stores[stays]) == ["after-the-stop", "running"]
    assert stored_ids(stores[stops]) == []


async def test_a_pinned_instance_keeps_every_harness_in_its_store(
    stores: tuple[str, str], tmp_path: Path
) -> None:
    pinned = PersistenceSettings(directory=str(tmp_path / "pinned"))
    plugin, errors = PersistencePlugin(pinned), ErrorRecorder()
    with anyio.fail_after(LIMIT):
        async with harness(plugin, errors, stores[0]) as a, harness(plugin, errors, stores[1]) as b:
            await saved(a, "in-a")
            await saved(b, "in-b")
            assert await listed(a) == await listed(b) == ["in-a", "in-b"]
    assert errors.errors == [] and errors.failures == []
    section = f"persistence:\n  directory: {tmp_path / 'pinned'}\n"
    assert stored_ids(section) == ["in-a", "in-b"]
    assert stored_ids(stores[0]) == stored_ids(stores[1]) == []
