"""dsh embedded in an asyncio service (a chat backend serving many users at once), written
only against docs/python.md, docs/hooks.md and docs/testing.md: many agents prompting
concurrently, queue/steer/abort/cancel/dispose mid-turn, streaming events to slow,
raising and disconnecting clients, leaving the harness while turns run, and agents
created and disposed in a loop. Nothing here waits on time: every wait is on an event
the test can see, and ``fail_after`` is only a guard against a hang.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from dsh import AgentDisposedError, DshError, ModelRequest, hookimpl
from dsh.agent import AgentHandle
from dsh.harness import Harness
from dsh.session import Session, SessionEvent
from dsh.testing import (
    InMemoryPersistence,
    ScriptedModel,
    check_invariants,
    hang,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import ToolContext, tool

GUARD = 20  # seconds: only a hang guard, never a timing assertion


class Service:
    """What a chat backend plugs in: a ``gate`` tool that waits until the test opens the
    caller's gate, and a ``session_event`` observer the test waits on (route by
    ``session.id``, as hooks.md says)."""

    def __init__(self) -> None:
        self.gates: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.in_gate: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.seen: defaultdict[str, list[SessionEvent]] = defaultdict(list)
        self._waiters: list[tuple[str, Callable[[SessionEvent], bool], anyio.Event]] = []

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        gates, in_gate = self.gates, self.in_gate

        @tool
        async def gate(context: ToolContext) -> str:
            """Wait until the service lets this user go on."""
            in_gate[context.agent.id].set()
            await gates[context.agent.id].wait()
            return "opened"

        register(gate)

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        self.seen[session.id].append(event)
        for waiter in list(self._waiters):
            sid, match, done = waiter
            if sid == session.id and match(event):
                done.set()
                self._waiters.remove(waiter)

    async def wait_for(self, session_id: str, match: Callable[[SessionEvent], bool]) -> None:
        if any(match(e) for e in self.seen[session_id]):
            return
        done = anyio.Event()
        self._waiters.append((session_id, match, done))
        await done.wait()


def is_chunk(event: SessionEvent) -> bool:
    return event.type == "assistant/chunk" and event.data.get("kind") == "text"


def other_tasks() -> set[asyncio.Task[Any]]:
    me = asyncio.current_task()
    return {t for t in asyncio.all_tasks() if t is not me and not t.done()}


def saw_steering(word: str) -> Callable[[ModelRequest], str]:
    def reply(request: ModelRequest) -> str:
        said = [m for m in request.messages if word in str(m)]
        return "steered" if said else "not steered"

    return reply


# -- 42 users at once ------------------------------------------------------------------

KINDS = ("plain", "queue", "steer", "abort", "cancel", "dispose", "disconnect")


def script_for(kind: str) -> list[Any]:
    return {
        "plain": [text("hello ", "there")],
        "queue": [tool_calls(("gate", {})), text("first"), text("second")],
        "steer": [tool_calls(("gate", {})), saw_steering("turn left")],
        "abort": [hang("partial ", "answer"), text("after abort")],
        "cancel": [hang("cut")],
        "dispose": [hang("going")],
        "disconnect": [hang("bye"), text("still here")],
    }[kind]


async def serve_user(
    harness: Harness, service: Service, kind: str, agent: AgentHandle, out: dict[str, Any]
) -> None:
    sid = agent.session.id
    out["kind"] = kind
    if kind == "plain":
        out["results"] = [await agent.prompt("hi")]
    elif kind == "queue":
        async with anyio.create_task_group() as tg:
            first: list[Any] = []
            tg.start_soon(lambda: _append(first, agent.prompt("one")))
            await service.in_gate[agent.id].wait()
            second = agent.prompt("two")  # sent while the first turn runs: queued
            task = _Result(second)
            tg.start_soon(task.run)
            # the second prompt is in the inbox once its task has run to send()
            await anyio.wait_all_tasks_blocked()
            service.gates[agent.id].set()
        out["results"] = [first[0], task.value]
    elif kind == "steer":
        async with anyio.create_task_group() as tg:
            first = []
            tg.start_soon(lambda: _append(first, agent.prompt("go")))
            await service.in_gate[agent.id].wait()
            agent.steer("turn left")
            service.gates[agent.id].set()
        out["results"] = first
    elif kind == "abort":
        async with anyio.create_task_group() as tg:
            first = []
            tg.start_soon(lambda: _append(first, agent.prompt("long story")))
            await service.wait_for(sid, lambda e: is_chunk(e) and e.data["text"] == "answer")
            agent.abort()
        out["results"] = [first[0], await agent.prompt("again")]
    elif kind == "cancel":
        async with anyio.create_task_group() as tg:
            first = []
            tg.start_soon(lambda: _append(first, agent.prompt("long story")))
            await service.wait_for(sid, is_chunk)
            queued = _Result(agent.prompt("then this"))
            tg.start_soon(queued.run)
            await anyio.wait_all_tasks_blocked()
            agent.cancel()
        out["results"] = first
        out["dropped"] = queued.error
    elif kind == "dispose":
        async with anyio.create_task_group() as tg:
            first = []
            tg.start_soon(lambda: _append(first, agent.prompt("long story")))
            await service.wait_for(sid, is_chunk)
            await agent.dispose()
        out["results"] = first
        try:
            agent.send("more")
        except AgentDisposedError as exc:
            out["after_dispose"] = exc
    elif kind == "disconnect":
        # the client goes away: the request handler's scope is cancelled mid-prompt
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent.prompt, "long story")
                await service.wait_for(sid, is_chunk)
                scope.cancel()
        out["results"] = [await agent.prompt("back again")]


async def _append(into: list[Any], awaitable: Any) -> None:
    into.append(await awaitable)


class _Result:
    def __init__(self, awaitable: Any) -> None:
        self.awaitable = awaitable
        self.value: Any = None
        self.error: BaseException | None = None

    async def run(self) -> None:
        try:
            self.value = await self.awaitable
        except DshError as exc:
            self.error = exc


async def test_forty_two_users_prompt_steer_abort_cancel_and_dispose_at_once(
    tmp_path: Path,
) -> None:
    service = Service()
    users = [(f"user{i}", KINDS[i % len(KINDS)]) for i in range(42)]
    models = [ScriptedModel(script_for(kind), name=f"m-{uid}") for uid, kind in users]
    outs: dict[str, dict[str, Any]] = {uid: {} for uid, _ in users}
    handles: dict[str, AgentHandle] = {}
    with anyio.fail_after(GUARD):
        async with scripted_harness(
            *models,
            plugins=[("service", service)],
            load_entry_points=False,
            workspace=tmp_path,
        ) as harness:
            for uid, _ in users:
                (tmp_path / "users" / uid).mkdir(parents=True)
            async with anyio.create_task_group() as tg:
                for uid, kind in users:
                    agent = await harness.agents.create(
                        uid,
                        options={"model": f"m-{uid}", "queue_mode": "one-at-a-time"},
                        meta={"user": uid},
                        workspace=f"users/{uid}",
                    )
                    handles[uid] = agent
                    tg.start_soon(serve_user, harness, service, kind, agent, outs[uid])
        assert other_tasks() == set()

    for uid, kind in users:
        agent, out = handles[uid], outs[uid]
        assert agent.status == "disposed", uid
        assert check_invariants(agent.session.events) == [], uid
        assert agent.session.meta["user"] == uid
        reasons = [r.reason for r in out["results"]]
        texts = [r.text for r in out["results"]]
        if kind == "plain":
            assert (reasons, texts) == (["completed"], ["hello there"])
        elif kind == "queue":
            assert (reasons, texts) == (["completed", "completed"], ["first", "second"])
            assert [r.prompts for r in out["results"]] == [["one"], ["two"]]
        elif kind == "steer":
            assert (reasons, texts) == (["completed"], ["steered"])
        elif kind == "abort":
            assert (reasons, texts) == (["aborted", "completed"], ["partial answer", "after abort"])
        elif kind == "cancel":
            assert (reasons, texts) == (["aborted"], ["cut"])
            assert isinstance(out["dropped"], DshError)
        elif kind == "dispose":
            assert (reasons, texts) == (["disposed"], ["going"])
            assert isinstance(out["after_dispose"], AgentDisposedError)
        elif kind == "disconnect":
            assert (reasons, texts) == (["completed"], ["still here"])
            ends = [e.data["reason"] for e in agent.session.events if e.type == "turn/end"]
            assert ends == ["aborted", "completed"]
    for model in models:
        model.assert_complete()


# -- one-character prompts (a "y" to "shall I go on?") -----------------------------------


async def test_two_equal_one_character_prompts_each_get_their_own_turn() -> None:
    """prompt() found its turn by the identity of its str, which CPython shares for one
    character: both callers got turn 1."""
    model = ScriptedModel([text("first y"), text("second y")])
    with anyio.fail_after(GUARD):
        async with scripted_harness(model, load_entry_points=False) as harness:
            agent = await harness.agents.create(
                "u", options={"model": "scripted", "queue_mode": "one-at-a-time"}
            )
            results: list[Any] = [None, None]

            async def ask(i: int) -> None:
                results[i] = await agent.prompt("y")

            async with anyio.create_task_group() as tg:  # two clicks on "yes"
                tg.start_soon(ask, 0)
                tg.start_soon(ask, 1)
    assert sorted(r.turn for r in results) == [1, 2], [r.turn for r in results]


# -- streaming events to a client --------------------------------------------------------


async def test_a_slow_reader_never_holds_the_agent_back_and_misses_nothing() -> None:
    model = ScriptedModel([text("a", "b", "c")])
    with anyio.fail_after(GUARD):
        async with scripted_harness(model, load_entry_points=False) as harness:
            agent = await harness.agents.create("u", options={"model": "scripted"})
            async with agent.events() as events:
                result = await agent.prompt("hi")  # nothing has read a single event
                assert result.reason == "completed"
                got = []
                async for event in events:
                    got.append(event)
                    if event.type == "turn/end":
                        break
            assert [e.seq for e in got] == [e.seq for e in agent.session.events]
    assert other_tasks() == set()


async def test_a_reader_that_raises_leaves_the_agent_working_and_is_unwatched() -> None:
    model = ScriptedModel([hang("part"), text("next")])
    with anyio.fail_after(GUARD):
        async with scripted_harness(model, load_entry_points=False) as harness:
            agent = await harness.agents.create("u", options={"model": "scripted"})
            left: BaseException | None = None
            try:
                async with agent.events() as events:
                    agent.send("hi")
                    async for event in events:
                        if is_chunk(event):
                            raise ConnectionResetError("client went away")
            except ConnectionResetError as exc:
                left = exc
            assert left is not None  # the reader's own error, as it raised it
            watch = harness.pm.get_plugin("dsh-events")
            assert not watch.readers  # the reader that left is no longer fed, at once
            assert agent.status == "running"  # the turn goes on without its reader
            agent.abort()
            result = await agent.prompt("again")
            assert (result.reason, result.text) == ("completed", "next")
    assert other_tasks() == set()


async def test_a_cancelled_reader_client_disconnect_leaves_the_turn_running() -> None:
    service = Service()
    model = ScriptedModel([tool_calls(("gate", {})), text("done")])
    with anyio.fail_after(GUARD):
        async with scripted_harness(
            model, plugins=[("service", service)], load_entry_points=False
        ) as harness:
            agent = await harness.agents.create("u", options={"model": "scripted"})
            reader_saw_call = anyio.Event()

            async def client() -> None:
                async with agent.events() as events:
                    async for event in events:
                        if event.type == "tool/call":
                            reader_saw_call.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(client)
                await anyio.wait_all_tasks_blocked()
                agent.send("work")
                await reader_saw_call.wait()
                tg.cancel_scope.cancel()  # the websocket closed
            service.gates["u"].set()
            await agent.when_idle()
            result = _turns(agent)[-1]
            assert (result.reason, result.text) == ("completed", "done")
    assert other_tasks() == set()


def _turns(agent: AgentHandle) -> list[Any]:
    from dsh.turns import turns

    return turns(agent.session.events)


async def test_an_event_stream_ends_when_its_agent_is_disposed() -> None:
    model = ScriptedModel([text("x")])
    async with scripted_harness(model, load_entry_points=False) as harness:
        agent = await harness.agents.create("u", options={"model": "scripted"})
        got: list[str] = []
        ended = anyio.Event()

        async def client() -> None:
            async with agent.events() as events:
                async for event in events:
                    got.append(event.type)
            ended.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(client)
            await anyio.wait_all_tasks_blocked()
            await agent.prompt("hi")
            await agent.dispose()
            await anyio.wait_all_tasks_blocked()  # a closed stream would have ended by now
            tg.cancel_scope.cancel()
        assert ended.is_set()
        assert got[-1] == "turn/end"


async def test_an_event_stream_of_an_agent_disposed_already_ends_at_once() -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        agent = await harness.agents.create("u", options={"model": "scripted"})
        await agent.dispose()
        with anyio.fail_after(GUARD):
            async with agent.events() as events:
                assert [event async for event in events] == []


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
