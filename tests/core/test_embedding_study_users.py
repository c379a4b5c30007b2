"""dsh embedded in an asyncio service (a chat backend serving many users at once), written
only against docs/python.md, docs/hooks.md and docs/testing.md: many agents prompting
concurrently, with queue/steer/abort/cancel/dispose mid-turn. Nothing here waits on
time: every wait is on an event the test can see, and ``fail_after`` is only a guard
against a hang.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from embedding_study_support import GUARD, Service, is_chunk, other_tasks

from dsh import AgentDisposedError, DshError, ModelRequest
from dsh.agent import AgentHandle
from dsh.harness import Harness
from dsh.testing import (
    ScriptedModel,
    check_invariants,
    hang,
    scripted_harness,
    text,
    tool_calls,
)


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
