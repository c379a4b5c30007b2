"""The embedding study (see test_embedding_study_users.py): leaving the harness while turns
run, an exception or a cancellation of the whole service, and agents created and
disposed in a loop. Every wait is on an event the test can see; ``fail_after`` is only
a guard against a hang.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import anyio
import anyio.to_thread
from embedding_study_support import GUARD, Service, is_chunk, other_tasks

from dsh import hookimpl
from dsh.agent import AgentHandle
from dsh.harness import Harness
from dsh.session import Session
from dsh.testing import (
    InMemoryPersistence,
    ScriptedModel,
    check_invariants,
    hang,
    scripted_harness,
)

# -- leaving the harness while turns run --------------------------------------------------


class ThreadedStore(InMemoryPersistence):
    """A store whose flush waits for a worker thread, as a real one's does."""

    @hookimpl
    async def session_flush(self, session: Session) -> None:
        await anyio.to_thread.run_sync(lambda: None)
        super().session_flush(session)


async def _streaming_users(
    harness: Harness, service: Service, tg: Any, n: int, results: dict[str, Any]
) -> list[AgentHandle]:
    agents = []
    for i in range(n):
        agent = await harness.agents.create(f"u{i}", options={"model": f"m{i}"})
        agents.append(agent)

        async def ask(agent: AgentHandle = agent) -> None:
            try:
                results[agent.id] = await agent.prompt("long")
            except BaseException as exc:  # what the caller of prompt() sees
                results[agent.id] = exc
                raise

        tg.start_soon(ask)
    for agent in agents:
        await service.wait_for(agent.session.id, is_chunk)
    return agents


def _models(n: int) -> list[ScriptedModel]:
    return [ScriptedModel([hang("kept ", "text")], name=f"m{i}") for i in range(n)]


async def test_leaving_the_harness_ends_running_turns_disposed_with_their_text() -> None:
    service, results = Service(), {}
    with anyio.fail_after(GUARD):
        # the service's task group, around the harness
        async with (
            anyio.create_task_group() as tg,
            scripted_harness(
                *_models(8), plugins=[("service", service)], load_entry_points=False
            ) as harness,
        ):
            agents = await _streaming_users(harness, service, tg, 8, results)
        assert other_tasks() == set()
    for agent in agents:
        assert check_invariants(agent.session.events) == []
        assert (results[agent.id].reason, results[agent.id].text) == ("disposed", "kept text")


async def test_an_exception_in_the_harness_block_propagates_as_itself() -> None:
    service, results = Service(), {}
    store = InMemoryPersistence()
    with anyio.fail_after(GUARD):
        raised: BaseException | None = None
        async with anyio.create_task_group() as tg:
            try:
                async with scripted_harness(
                    *_models(6),
                    plugins=[("service", service), ("store", store)],
                    load_entry_points=False,
                ) as harness:
                    agents = await _streaming_users(harness, service, tg, 6, results)
                    raise KeyError("boom")
            except BaseException as exc:  # what leaves the block, as it is
                raised = exc
        assert type(raised) is KeyError and raised.args == ("boom",)  # not in a group
        assert other_tasks() == set()
    for agent in agents:
        assert check_invariants(agent.session.events) == []
        assert results[agent.id].reason == "disposed"
        stored = store.stored[agent.session.id].events
        assert [e.seq for e in stored] == [e.seq for e in agent.session.events]


async def test_cancelling_the_whole_service_closes_every_log_and_flushes_it() -> None:
    service, results = Service(), {}
    store = ThreadedStore()
    with anyio.fail_after(GUARD):
        with anyio.CancelScope() as everything:  # Ctrl-C on the service
            async with (
                anyio.create_task_group() as tg,
                scripted_harness(
                    *_models(6),
                    plugins=[("service", service), ("store", store)],
                    load_entry_points=False,
                ) as harness,
            ):
                agents = await _streaming_users(harness, service, tg, 6, results)
                everything.cancel()
                await anyio.sleep_forever()
        assert everything.cancelled_caught
        assert other_tasks() == set()
    for agent in agents:
        assert agent.status == "disposed"
        assert check_invariants(agent.session.events) == []
        end = agent.session.events[-1]
        assert end.type == "turn/end" and end.data["reason"] in ("aborted", "disposed")
        assert isinstance(results[agent.id], anyio.get_cancelled_exc_class())
        stored = store.stored[agent.session.id].events
        assert [e.seq for e in stored] == [e.seq for e in agent.session.events]


# -- many agents over the life of a service -----------------------------------------------


async def test_creating_and_disposing_a_thousand_agents_does_not_grow() -> None:
    model = ScriptedModel([])
    with anyio.fail_after(GUARD):
        async with scripted_harness(model, load_entry_points=False) as harness:

            async def churn(n: int) -> None:
                for i in range(n):
                    agent = await harness.agents.create("u", options={"model": "scripted"})
                    if i % 10 == 0:
                        async with agent.events():
                            pass
                    await agent.dispose()

            await churn(200)  # warm caches up
            gc.collect()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                await churn(1000)
                gc.collect()
                grown = tracemalloc.get_traced_memory()[0] - before
            finally:
                tracemalloc.stop()
            assert harness.agents.list() == []
    # a leak of one small dict entry per agent would be ~100 KB over 1,000 agents
    assert grown < 64 * 1024, f"{grown} bytes kept after 1,000 agents came and went"
