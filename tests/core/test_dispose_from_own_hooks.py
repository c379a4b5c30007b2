"""``await dispose()`` from one of the agent's own hook impls (docs/python.md, the
AgentHandle table): the disposal waits for that impl, so it begins the disposal and
returns at once, and the disposal ends once the impl has returned: no impl is cut short
by the grace and reported, the turn's flush is not lost, and ``agent_disposed`` comes
once, after ``agent_created`` (docs/hooks.md), even when another task disposes the agent
while its ``agent_created`` observers are told.

The grace is lowered so that, were the impl left waiting on itself, the test would fail
on what is reported rather than wait 5 s; ``fail_after`` only guards against a hang."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from loop_support import LIMIT

import dsh._grace
from dsh import hookimpl
from dsh.agent import AgentHandle
from dsh.harness import Harness
from dsh.session import Session, SessionEvent
from dsh.testing import (
    ErrorRecorder,
    InMemoryPersistence,
    ScriptedModel,
    scripted_harness,
    tool_calls,
)
from dsh.tools import tool
from dsh.turns import turns

GRACE = 0.5


@pytest.fixture(autouse=True)
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dsh._grace, "GRACE_SECONDS", GRACE)


class Disposer:
    """Awaits the agent's own ``dispose()`` in the hook ``where`` (after its first turn),
    directly or (``nested``) in a task of a task group it opens; records what happens."""

    def __init__(self, where: str, nested: bool = False) -> None:
        self.where = where
        self.nested = nested
        self.harness: Harness | None = None
        self.handle: AgentHandle | None = None  # else found by its id (agent_created)
        self.said: list[str] = []
        self.done = False

    async def _dispose(self, agent_id: str) -> None:
        assert self.harness is not None
        handle = self.handle or self.harness.agents.get(agent_id)
        if self.done or handle is None:
            return
        self.done = True
        if self.nested:
            async with anyio.create_task_group() as tg:
                tg.start_soon(handle.dispose)
        else:
            await handle.dispose()
        self.said.append(f"dispose returned in {self.where}")

    @hookimpl
    async def agent_status(self, agent: Any, status: str) -> None:
        if self.where == "agent_status" and status == "idle" and agent.turns >= 1:
            await self._dispose(agent.id)

    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        if self.where == "session_event" and event.type == "turn/end":
            await self._dispose("a")

    @hookimpl
    async def session_flush(self, session: Session) -> None:
        if self.where == "session_flush" and turns(session.events):
            await self._dispose("a")

    @hookimpl
    async def agent_created(self, agent: Any) -> None:
        if self.where == "agent_created":
            await self._dispose(agent.id)
            self.said.append("agent_created returns")

    @hookimpl
    async def agent_disposed(self, agent: Any) -> None:
        self.said.append("agent_disposed")
        if self.where == "agent_disposed":  # from the teardown a dispose() started
            await self._dispose(agent.id)


HOOKS = ["agent_status", "session_event", "session_flush", "agent_disposed"]


@pytest.mark.parametrize("nested", [False, True], ids=["direct", "in-a-task-group"])
@pytest.mark.parametrize("where", HOOKS)
async def test_dispose_awaited_in_an_own_hook_returns_and_the_turn_is_saved(
    where: str, nested: bool
) -> None:
    store, errors = InMemoryPersistence(), ErrorRecorder()
    disposer = Disposer(where, nested)
    model = ScriptedModel(["A"])
    async with scripted_harness(
        model, plugins=[store, errors, ("disposer", disposer)], load_entry_points=False
    ) as h:
        disposer.harness = h
        agent = disposer.handle = await h.agents.create("a", options={"model": "scripted"})
        sid = agent.session.id
        with anyio.fail_after(LIMIT):
            agent.send("hi")
            await agent.when_idle()
            await agent.dispose()  # the disposal ends (when not begun by the hook)
        assert errors.failures == [] and errors.errors == []
        assert agent.status == "disposed" and h.agents.get("a") is None
        if where == "agent_disposed":
            assert disposer.said == ["agent_disposed", "dispose returned in agent_disposed"]
        else:
            assert disposer.said == [f"dispose returned in {where}", "agent_disposed"]
        [turn] = turns(store.stored[sid].events)  # the turn's flush was not lost
        assert (turn.reason, turn.text) == ("completed", "A")


async def test_dispose_awaited_in_agent_created_returns_and_disposed_comes_after() -> None:
    errors = ErrorRecorder()
    disposer = Disposer("agent_created")
    async with scripted_harness(
        ScriptedModel([]), plugins=[errors, ("disposer", disposer)], load_entry_points=False
    ) as h:
        disposer.harness = h
        with anyio.fail_after(LIMIT):
            agent = await h.agents.create("a", options={"model": "scripted"})
            # the disposal the hook began: when_idle() would only wait for the loop to
            # exit, not for the flush, the forgetting and agent_disposed after it
            await agent.dispose()
        assert agent.status == "disposed" and h.agents.get("a") is None
        assert errors.failures == [] and errors.errors == []
        assert disposer.said == [
            "dispose returned in agent_created",
            "agent_created returns",
            "agent_disposed",
        ]


async def test_agent_disposed_waits_for_agent_created_when_another_task_disposes() -> None:
    said: list[str] = []
    inside, go = anyio.Event(), anyio.Event()

    class SlowCreated:
        @hookimpl
        async def agent_created(self) -> None:
            inside.set()
            await go.wait()
            said.append("agent_created returns")

        @hookimpl
        def agent_disposed(self) -> None:
            said.append("agent_disposed")

    async with scripted_harness(
        ScriptedModel([]), plugins=[("slow", SlowCreated())], load_entry_points=False
    ) as h:
        created: list[AgentHandle] = []

        async def create() -> None:
            created.append(await h.agents.create("a", options={"model": "scripted"}))

        async def dispose(handle: AgentHandle) -> None:
            await handle.dispose()
            said.append("dispose returned")

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(create)
                await inside.wait()
                handle = h.agents.get("a")
                assert handle is not None
                tg.start_soon(dispose, handle)
                await anyio.wait_all_tasks_blocked()  # the teardown as far as it goes
                go.set()
        assert said == ["agent_created returns", "agent_disposed", "dispose returned"]
        assert created[0].status == "disposed"


async def test_a_task_a_hook_started_elsewhere_still_waits_for_the_disposal() -> None:
    """Started from a hook into a task group the hook does not wait for, a task's
    ``dispose()`` is no hook's: it returns once the agent is disposed."""
    said: list[str] = []
    returned = anyio.Event()

    async with anyio.create_task_group() as outer:

        class Later:
            harness: Harness | None = None

            @hookimpl
            async def agent_status(self, agent: Any, status: str) -> None:
                if status == "idle" and agent.turns == 1:
                    outer.start_soon(self.dispose, agent.id)

            async def dispose(self, agent_id: str) -> None:
                assert self.harness is not None
                handle = self.harness.agents.get(agent_id)
                assert handle is not None
                await handle.dispose()
                said.append("dispose returned")
                returned.set()

            @hookimpl
            def agent_disposed(self) -> None:
                said.append("agent_disposed")

        later = Later()
        async with scripted_harness(
            ScriptedModel(["A"]), plugins=[("later", later)], load_entry_points=False
        ) as h:
            later.harness = h
            agent = await h.agents.create("a", options={"model": "scripted"})
            with anyio.fail_after(LIMIT):
                await agent.prompt("hi")
                await returned.wait()
        assert said == ["agent_disposed", "dispose returned"]


async def test_a_task_under_the_creator_waits_for_the_disposal_while_created_is_told() -> None:
    """While another agent's ``agent_created`` observers are told, a task under the one
    creating it (here the harness's own host task, as in most programs) is not one of
    those observers: its ``dispose()`` returns once the agent is disposed (behaviour 32)."""
    said: list[str] = []
    inside, go = anyio.Event(), anyio.Event()

    class SlowCreated:
        @hookimpl
        async def agent_created(self) -> None:
            inside.set()
            await go.wait()
            said.append("agent_created returns")

        @hookimpl
        def agent_disposed(self) -> None:
            said.append("agent_disposed")

    async with scripted_harness(
        ScriptedModel([]), plugins=[("slow", SlowCreated())], load_entry_points=False
    ) as h:

        async def dispose(number: int) -> None:
            handle = h.agents.get("b")
            assert handle is not None
            await handle.dispose()
            said.append(f"dispose #{number} returned ({handle.status})")

        async def disposer() -> None:
            await inside.wait()
            async with anyio.create_task_group() as tg:
                tg.start_soon(dispose, 1)
                tg.start_soon(dispose, 2)
                await anyio.wait_all_tasks_blocked()  # each as far as it goes
                go.set()

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(disposer)  # a task under this one, which creates "b"
                await h.agents.create("b", options={"model": "scripted"})
        assert said[:2] == ["agent_created returns", "agent_disposed"]
        assert sorted(said[2:]) == [  # woken in either order (trio's scheduler)
            "dispose #1 returned (disposed)",
            "dispose #2 returned (disposed)",
        ]
        assert h.agents.get("b") is None


@pytest.mark.parametrize("where", ["tool", "agent_request"])
async def test_a_tool_or_interception_hook_disposing_its_agent_stops_there(where: str) -> None:
    """The turn is cut short at the ``dispose()`` call itself: no code after it runs, no
    request goes to the model after an ``agent_request`` impl disposed the agent, and the
    tool's call is reported interrupted, not as its result."""
    ran: list[str] = []
    handles: list[AgentHandle] = []

    @tool
    async def quit_tool() -> str:
        """Dispose this agent."""
        if where == "tool":
            await handles[0].dispose()
            ran.append("after the dispose")
        return "returned"

    class Quitter:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(quit_tool)

        @hookimpl
        async def agent_request(self, request: Any) -> Any:
            if where == "agent_request":
                await handles[0].dispose()
                ran.append("after the dispose")
            return request

    errors = ErrorRecorder()
    model = ScriptedModel([tool_calls(("quit_tool", {})), "done"])
    async with scripted_harness(
        model, plugins=[errors, ("quitter", Quitter())], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        handles.append(agent)
        with anyio.fail_after(LIMIT):
            agent.send("go")
            await agent.when_idle()
        assert ran == [] and errors.failures == [] and errors.errors == []
        assert agent.status == "disposed"
        [turn] = turns(agent.session.events)
        assert turn.reason == "disposed"
        results = [e for e in agent.session.events if e.type == "tool/result"]
        if where == "agent_request":
            assert len(model.requests) == 0 and results == []
        else:
            assert len(model.requests) == 1
            [result] = results  # the call is closed as interrupted
            assert result.data["is_error"] is True and result.data["content"] != "returned"


async def test_an_agent_created_observer_that_hangs_is_cut_short_by_the_disposal() -> None:
    """Another task's ``dispose()`` waits for the ``agent_created`` observers (then
    ``agent_disposed``), but within the disposal's grace, as other hooks: the one that
    does not return is cancelled and reported, and the disposal ends."""
    said: list[str] = []
    inside = anyio.Event()

    class Hung:
        @hookimpl
        async def agent_created(self) -> None:
            inside.set()
            await anyio.sleep_forever()

        @hookimpl
        def agent_disposed(self) -> None:
            said.append("agent_disposed")

    errors = ErrorRecorder()
    async with scripted_harness(
        ScriptedModel([]), plugins=[errors, ("hung", Hung())], load_entry_points=False
    ) as h:
        created: list[AgentHandle] = []

        async def create() -> None:
            created.append(await h.agents.create("a", options={"model": "scripted"}))

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(create)
                await inside.wait()
                handle = h.agents.get("a")
                assert handle is not None
                await handle.dispose()
                said.append("dispose returned")
        assert said == ["agent_disposed", "dispose returned"]
        assert created == [handle] and handle.status == "disposed"
        [failure] = errors.failures
        assert failure.hook == "agent_created" and "plugin 'hung'" in str(failure)
        assert "TimeoutError: did not return within" in str(failure)
