"""The process the crash test kills (run as a script; not a test module).

It imports everything once, then serves rounds: for each JSON command line on stdin it
forks a worker that resumes (or creates) the session and runs turns against a scripted
model until it is killed, and reports ``started PID`` and, once the worker is gone,
``exited PID STATUS``. Forking from this single-threaded process makes a round cost a
few milliseconds instead of an interpreter start.

Worker lines (written with one ``os.write`` each, so they never interleave):

- ``resumed N SHA``: the session is live with N events (stored ones plus closers added
  on load); SHA is the sha256 of their JSON lines;
- ``flushed N SHA``: a turn ended and its flush returned: the first N events, with
  that digest, are durable.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import threading
import traceback
from typing import Any

import anyio

from dsh import DshError, ModelRequest, ToolResultMessage, UserMessage, hookimpl
from dsh.testing import Reply, ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh.tools import tool
from dsh_persistence import PersistencePlugin, PersistenceSettings


def say(line: str) -> None:
    os.write(1, (line + "\n").encode())


@tool
async def work(ms: int) -> str:
    "Pretend to do something that takes a few milliseconds."
    await anyio.sleep(ms / 1000)
    return f"worked {ms} ms"


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(work)


def replies(rng: random.Random) -> Any:
    def reply(request: ModelRequest) -> Reply:
        last = request.messages[-1] if request.messages else None
        if isinstance(last, UserMessage) or (
            isinstance(last, ToolResultMessage) and rng.random() < 0.3
        ):
            calls = [("work", {"ms": rng.randint(0, 4)}) for _ in range(rng.randint(1, 2))]
            named = [(f"work#c{rng.getrandbits(32):08x}", args) for _, args in calls]
            return tool_calls(*named, say="working on it")
        return text(*(f"part {i} " for i in range(rng.randint(1, 8))))

    return reply


def digest(events: Any) -> str:
    hasher = hashlib.sha256()
    for event in events:
        hasher.update(event.to_json().encode() + b"\n")
    return hasher.hexdigest()


async def serve(command: dict[str, Any]) -> None:
    rng = random.Random(command["round"])
    settings = PersistenceSettings(
        backend=command["backend"], directory=command["directory"], checkpoint_delay=0
    )
    plugin = PersistencePlugin(settings)
    model = ScriptedModel([replies(rng)] * 100_000)
    options = {"model": "scripted"}
    plugins = [("tools", Tools()), ("persistence", plugin)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        try:
            agent = await harness.agents.resume("a", command["session"], options=options)
        except DshError as exc:
            if "not stored" not in str(exc):
                raise
            agent = await harness.agents.create("a", session_id=command["session"], options=options)
        events = agent.session.events
        say(f"resumed {len(events)} {digest(events)}")
        for number in range(1_000_000):
            await run_turn(agent, f"round {command['round']}, prompt {number}")
            say(f"flushed {len(events)} {digest(events)}")


async def one_turn() -> None:
    model = ScriptedModel([replies(random.Random(0))] * 10)
    async with scripted_harness(model, plugins=[Tools()], load_entry_points=False) as harness:
        await run_turn(await harness.agents.create("a", options={"model": "scripted"}), "hi")


def warm_up() -> None:
    """Run a turn without persistence (so no thread starts) in this parent process: what
    it imports and builds lazily is then ready in every worker."""
    import dsh_persistence._service  # noqa: F401

    anyio.run(one_turn)
    assert threading.active_count() == 1, "forking needs a single-threaded parent"


def main() -> None:
    warm_up()
    for line in sys.stdin:
        command = json.loads(line)
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                anyio.run(serve, command)
            except BaseException:
                traceback.print_exc()
                status = 3
            finally:
                os._exit(status)
        say(f"started {pid}")
        _, status = os.waitpid(pid, 0)
        say(f"exited {pid} {status}")


if __name__ == "__main__":
    main()
