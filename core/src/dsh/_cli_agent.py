"""``dsh run`` and ``dsh chat``: an agent in the terminal.

``run`` sends one prompt and exits when the turn ends (status 1 if it ended ``error``,
130 if it was interrupted). ``chat`` reads lines: while the agent is idle a line starts
a turn; while it runs, a line steers the running turn and ``/queue TEXT`` queues TEXT
for the next turn. Ctrl-C once cancels the running turn (the agent stays); twice in a
row, or at an idle prompt, quits.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from dsh._render import Renderer, shorten
from dsh.errors import DshError
from dsh.hookspecs import hookimpl

if TYPE_CHECKING:
    from dsh.agent import AgentHandle
    from dsh.harness import Harness
    from dsh.plugins import PluginManager

__all__ = ["chat", "run"]

#: The small local model tends to repeat a tool call; bound its turns unless dsh.yml says.
LOCAL_MAX_STEPS = 8

SYSTEM_PROMPT = (
    "You are dsh, a coding agent working in the directory {workspace}. Use the tools to "
    "read, search and change files and to run commands there. Be brief; say what you did."
)


@asynccontextmanager
async def _agent(
    args: argparse.Namespace, pm: PluginManager
) -> AsyncIterator[tuple[Harness, AgentHandle, Renderer]]:
    from dsh.config import find_config
    from dsh.harness import Harness
    from dsh.llm.choose import choose_model

    workspace: Path = args.workspace
    config = args.config or find_config(workspace)
    renderer = Renderer(sys.stdout, sys.stderr, json=getattr(args, "json", False))
    pm.register(renderer, "dsh-cli")
    async with Harness(pm=pm, config=config, workspace=workspace) as harness:
        choice = choose_model(harness, args.model)
        model = choice.name
        server = None
        if model == "local":
            from dsh.llm.local import start_local

            print(f"dsh: starting the local model ({choice.why})", file=sys.stderr)
            server = await start_local(harness)
        print(f"dsh: model {model} ({choice.why})", file=sys.stderr)
        # The first agent of dsh.yml, if any, gives the options (extra_roots, max_steps,
        # plugin options); the command line decides the model.
        base = harness.config.agents[0] if harness.config.agents else None
        options: dict[str, Any] = {
            **(base.options if base else {}),
            "model": model,
            "system_prompt": (base.system_prompt if base and base.system_prompt else None)
            or SYSTEM_PROMPT.format(workspace=workspace),
        }
        if base is not None and base.max_steps is not None:
            options["max_steps"] = base.max_steps
        elif server is not None:
            options["max_steps"] = LOCAL_MAX_STEPS
        agent_id = base.id if base is not None else "main"
        started = harness.agents.get(agent_id)
        if started is not None:  # started from dsh.yml; the command line chose its model
            await started.dispose()
        try:
            agent = await harness.agents.create(agent_id, options=options)
            renderer.session_id = agent.session.id
            yield harness, agent, renderer
            await agent.dispose()  # flushed before the local server goes away
        finally:
            if server is not None:
                server.stop()


async def run(args: argparse.Namespace, pm: PluginManager) -> int:
    async with _agent(args, pm) as (_, agent, renderer):
        agent.send(args.prompt)
        interrupted = False
        async with anyio.create_task_group() as tg:

            async def on_sigint() -> None:
                nonlocal interrupted
                with anyio.open_signal_receiver(signal.SIGINT) as signals:
                    async for _ in signals:
                        interrupted = True
                        agent.cancel()

            tg.start_soon(on_sigint)
            await agent.when_idle()
            tg.cancel_scope.cancel()
    if interrupted:
        return 130
    end = renderer.last_end or {}
    return 1 if end.get("reason") == "error" else 0


async def _lines() -> AsyncIterator[str | None]:
    """Lines typed on stdin, read without a blocking thread; None at end of input."""
    fd = sys.stdin.fileno()
    buffer = b""
    while True:
        await anyio.wait_readable(fd)
        data = os.read(fd, 4096)
        if not data:
            if buffer:
                yield buffer.decode(errors="replace")
            yield None
            return
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line.decode(errors="replace").rstrip("\r")


class TerminalApprovals:
    """The chat's front end for dsh-permissions: a call that needs approval is shown on
    stderr, and the next line typed answers it (``y`` once, ``a`` always, anything
    else denies; a sentence is passed to the model as the reason)."""

    def __init__(self) -> None:
        self._waiting: tuple[anyio.Event, list[str]] | None = None

    @hookimpl(optionalhook=True)
    async def permission_ask(self, request: Any) -> Any:
        from dsh_permissions import PermissionAnswer

        while self._waiting is not None:  # one question at a time
            await self._waiting[0].wait()
        print(
            f"\n? {request.tool}({shorten(request.arguments, 80)}): {request.reason}\n"
            "  allow? y = once, a = always, n = no (or type a reason for the model)",
            file=sys.stderr,
            flush=True,
        )
        event, box = anyio.Event(), list[str]()
        self._waiting = (event, box)
        try:
            await event.wait()
        finally:
            self._waiting = None
        line = box[0].strip() if box else ""
        if line.lower() in ("y", "yes"):
            return PermissionAnswer.once()
        if line.lower() in ("a", "always"):
            return PermissionAnswer.always()
        if line.lower() in ("", "n", "no"):
            return PermissionAnswer.deny("the user said no")
        return PermissionAnswer.deny(line)

    def answer(self, line: str) -> bool:
        """Give ``line`` to the pending question; False if none is pending."""
        if self._waiting is None:
            return False
        event, box = self._waiting
        box.append(line)
        event.set()
        return True


async def chat(args: argparse.Namespace, pm: PluginManager) -> int:
    approvals = TerminalApprovals()
    pm.register(approvals, "dsh-cli-approvals")
    async with _agent(args, pm) as (harness, agent, renderer):
        prompt = "> " if sys.stdin.isatty() else ""
        async with anyio.create_task_group() as tg:
            last_sigint = 0.0

            async def on_sigint() -> None:
                nonlocal last_sigint
                with anyio.open_signal_receiver(signal.SIGINT) as signals:
                    async for _ in signals:
                        now = anyio.current_time()
                        idle = agent.agent.status == "idle" and not agent.agent.inbox.queued
                        if idle or now - last_sigint < 2.0:
                            tg.cancel_scope.cancel()
                            return
                        last_sigint = now
                        agent.cancel()
                        print("\n(cancelled; Ctrl-C again to quit)", file=sys.stderr)

            tg.start_soon(on_sigint)

            async def prompt_when_idle() -> None:
                await agent.when_idle()
                sys.stderr.write(prompt)
                sys.stderr.flush()

            tg.start_soon(prompt_when_idle)
            async for line in _lines():
                if line is None or line.strip() in ("/quit", "/exit"):
                    break
                if approvals.answer(line):
                    continue
                command, _, rest = line.strip().partition(" ")
                if command == "/compact":  # runs beside a turn; the prompt comes back
                    tg.start_soon(_compact, harness, agent, prompt_when_idle)
                    continue
                if command == "/resume":
                    agent = await _resume(harness, agent, rest.strip(), renderer)
                    tg.start_soon(prompt_when_idle)
                    continue
                if _handle(line, harness, agent) or (
                    agent.agent.status == "idle" and not agent.agent.inbox.queued
                ):
                    tg.start_soon(prompt_when_idle)
            await agent.when_idle()
            tg.cancel_scope.cancel()
    return 0


async def _compact(
    harness: Harness, agent: AgentHandle, then: Callable[[], Awaitable[None]]
) -> None:
    """``/compact``: compact the history now (needs dsh-compaction, loaded), then
    ``then()`` (shows the prompt again once the agent is idle)."""
    if not harness.pm.has_plugin("compaction"):
        print("  /compact needs the compaction plugin (dsh-compaction)", file=sys.stderr)
    else:
        from dsh_compaction import compact_now

        try:
            result = await compact_now(agent)
        except DshError as error:
            print(f"  /compact: {error}", file=sys.stderr)
        else:
            print(f"  /compact: {result}", file=sys.stderr)
    await then()


async def _resume(
    harness: Harness, agent: AgentHandle, session_id: str, renderer: Renderer
) -> AgentHandle:
    """``/resume ID``: continue a stored session in place of the current one."""
    if not session_id:
        print("  /resume needs a session id (see `dsh sessions list`)", file=sys.stderr)
        return agent
    model = agent.agent.options.get("model")
    await agent.dispose()
    try:
        resumed = await harness.agents.resume(agent.id, session_id)
    except DshError as error:
        print(f"  /resume: {error}", file=sys.stderr)
        resumed = await harness.agents.create(agent.id, options=agent.agent.options)
    resumed.agent.options["model"] = model
    renderer.session_id = resumed.session.id
    turns = resumed.agent.turns
    print(f"  session {resumed.session.id} ({turns} turns so far)", file=sys.stderr)
    return resumed


def _handle(line: str, harness: Harness, agent: AgentHandle) -> bool:
    """Act on one typed line; True when it started a turn."""
    text = line.strip()
    if not text:
        return False
    busy = agent.agent.status == "running" or bool(agent.agent.inbox.queued)
    if text.startswith("/"):
        command, _, rest = text.partition(" ")
        if command == "/queue" and rest:
            agent.send(rest)
            return not busy
        if command == "/plugins":
            from dsh.plugins import list_plugins

            for info in list_plugins(harness.pm):
                print(f"  {info.name} ({info.distribution or 'explicit'})", file=sys.stderr)
        elif command == "/model":
            print(f"  {agent.agent.options.get('model')}", file=sys.stderr)
        else:
            known = "/queue TEXT, /resume ID, /compact, /plugins, /model, /quit"
            print(f"  unknown command {command} (try {known})", file=sys.stderr)
        return False
    if busy:
        agent.steer(text)
        return False
    agent.send(text)
    return True


def check_config(args: argparse.Namespace, pm: PluginManager) -> int:
    """``dsh config check``: validate dsh.yml and every plugin section."""
    from dsh.config import find_config, load_config

    settings: dict[str, Any] = {}
    pm.relay.register_settings(
        lambda plugin, model, section=None: settings.update({section or plugin: model})
    )
    path = args.config or find_config(Path(args.cwd or os.getcwd()))
    if path is None:
        print("dsh: no dsh.yml here; defaults apply", file=sys.stderr)
        return 0
    try:
        load_config(path, settings=settings)
    except DshError as error:
        print(f"dsh: {error}", file=sys.stderr)
        return 1
    print(f"{path}: ok")
    return 0
