"""Behaviour 32 at the harness: the final flush of a disposed agent is not cut short by a
cancelled caller, an outer cancellation or a raising flush.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh import hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness


async def test_b32_a_cancelled_dispose_caller_does_not_cut_the_final_flush_short() -> None:
    import anyio

    from dsh.testing import InMemoryPersistence

    flushing = anyio.Event()
    disposed = anyio.Event()
    flushed: list[int] = []
    final = False

    class SlowStore:
        @hookimpl
        async def session_flush(self, session: Any) -> None:
            if not final:
                return  # the flush after the turn; the final one is slow
            flushing.set()
            await anyio.sleep(0.05)
            flushed.append(len(session.events))

        @hookimpl
        def agent_disposed(self, agent: Any) -> None:
            disposed.set()

    store = InMemoryPersistence()
    plugins = [("slow", SlowStore()), ("mem", store)]
    async with scripted_harness(
        ScriptedModel(["one"]), plugins=plugins, load_entry_points=False
    ) as h:
        agent = await h.agents.create("a")
        await run_turn(agent, "hi")
        final = True
        with anyio.fail_after(5):
            with anyio.CancelScope() as caller:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(agent.dispose)
                    await flushing.wait()
                    caller.cancel()  # the dispose() caller gives up mid-flush
            await disposed.wait()
        assert flushed == [len(agent.session.events)]
        assert len(store.stored[agent.session.id].events) == len(agent.session.events)
        assert h.agents.get("a") is None


async def test_b32_a_raising_final_flush_still_forgets_the_agent_and_releases_every_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import anyio

    disposed: list[str] = []
    after: list[object] = []

    class Watch:
        @hookimpl
        def agent_disposed(self, agent: Any) -> None:
            disposed.append(agent.id)

    async def broken_flush() -> None:
        raise RuntimeError("disk on fire")

    returned: list[str] = []
    # the failure surfaces from the harness's task group
    with pytest.raises(ExceptionGroup) as raised:  # noqa: PT012
        async with scripted_harness(
            ScriptedModel(), plugins=[("watch", Watch())], load_entry_points=False
        ) as h:
            handle = await h.agents.create("a")
            monkeypatch.setattr(handle.agent, "flush", broken_flush)

            async def dispose(name: str) -> None:
                await handle.dispose()
                returned.append(name)

            try:
                with anyio.fail_after(5):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(dispose, "first")
                        tg.start_soon(dispose, "second")
            finally:
                after.append(h.agents.get("a"))
                h.agents._live.pop("a", None)  # a broken teardown must not hang the exit
    assert "disk on fire" in repr(raised.value)
    assert after == [None]
    assert disposed == ["a"]
    assert sorted(returned) == ["first", "second"]


@pytest.mark.timeout(60)  # the bug was a loop spinning forever: fail, do not hang
async def test_b32_a_harness_left_by_an_outer_cancellation_still_flushes_its_agents() -> None:
    # `with anyio.move_on_after(...)` around a harness whose persistence flushes in a
    # worker thread: the final flush ran in a cancelled scope and spun forever
    import anyio

    from dsh.testing import hang

    flushed: list[list[str]] = []

    class ThreadedFlush:
        @hookimpl
        async def session_flush(self, session: Any) -> None:
            types = [event.type for event in session.events]
            await anyio.to_thread.run_sync(flushed.append, types)

    with anyio.CancelScope() as outer:

        class CancelOnChunk:
            @hookimpl
            def session_event(self, event: Any) -> None:
                if event.type == "assistant/chunk":
                    outer.cancel()  # the deadline of an outer timeout, mid-stream

        plugins = [("flush", ThreadedFlush()), ("cancel", CancelOnChunk())]
        model = ScriptedModel([hang("part")])
        async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            await run_turn(agent, "hi")
    assert outer.cancelled_caught
    assert flushed and flushed[-1][-1] == "turn/end"  # the final flush saw the turn's end
