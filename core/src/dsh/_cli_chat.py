"""``dsh chat``: an agent in the terminal, talked to line by line.

While the agent is idle a line starts a turn; while it runs, a line steers the running
turn and ``/queue TEXT`` queues TEXT for the next turn. Ctrl-C once cancels the running
turn (the agent stays); twice in a row, or at an idle prompt, quits. Lines from a pipe
or a file are taken one at a time, each once the agent is idle or asks a question, as
someone watching would type them. At the end of input (Ctrl-D, or the end of a piped or
redirected file) a pending permission question is denied and chat quits once the agent
is idle.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from dsh._cli_agent import agent_session, resume_options, so_far
from dsh._render import CLOSED_STATUS, Renderer, shorten
from dsh.errors import DshError
from dsh.hookspecs import hookimpl
from dsh.persistence import find_session

if TYPE_CHECKING:
    from dsh.agent import AgentHandle
    from dsh.harness import Harness
    from dsh.plugins import PluginManager

__all__ = ["TerminalApprovals", "chat"]

_END_OF_INPUT = "no answer: the input ended (no one is at the terminal to answer)"


async def _lines() -> AsyncIterator[str | None]:
    """Lines typed on stdin, read without a blocking thread; None at end of input."""
    fd = sys.stdin.fileno()
    pollable = True
    buffer = b""
    while True:
        if pollable:
            try:
                await anyio.wait_readable(fd)
            except PermissionError:
                # epoll refuses regular files and /dev/null (EPERM); reading them never
                # blocks, so read on, letting the other tasks run between reads.
                pollable = False
        if not pollable:
            await anyio.lowlevel.checkpoint()
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
    else denies; a sentence is passed to the model as the reason). Once the input has
    ended (``close()``) every question, pending or new, is denied."""

    def __init__(self) -> None:
        self._waiting: tuple[anyio.Event, list[str | None]] | None = None
        self._asked = anyio.Event()  # set (and replaced) each time a question waits
        self._closed = False

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
        box: list[str | None] = []
        if self._closed:
            box.append(None)
        else:
            event = anyio.Event()
            self._waiting = (event, box)
            self._asked.set()
            self._asked = anyio.Event()
            try:
                await event.wait()
            finally:
                self._waiting = None
        if not box or box[0] is None:
            print("  denied: the input ended", file=sys.stderr, flush=True)
            return PermissionAnswer.deny(_END_OF_INPUT)
        line = box[0].strip()
        if line.lower() in ("y", "yes"):
            return PermissionAnswer.once()
        if line.lower() in ("a", "always"):
            return PermissionAnswer.always()
        if line.lower() in ("", "n", "no"):
            return PermissionAnswer.deny("the user said no")
        return PermissionAnswer.deny(line)

    async def question(self) -> None:
        """Return once a question waits for its answer."""
        while self._waiting is None:
            await self._asked.wait()

    def answer(self, line: str | None) -> bool:
        """Give ``line`` to the pending question (None: no answer will come); False if
        none is pending."""
        if self._waiting is None:
            return False
        event, box = self._waiting
        box.append(line)
        event.set()
        return True

    def close(self) -> None:
        """The input ended: deny the pending question and every later one."""
        self._closed = True
        self.answer(None)


async def chat(args: argparse.Namespace, pm: PluginManager) -> int:
    typed = sys.stdin.isatty()
    lines = _lines()
    if not typed:  # a script: with nothing in it, start nothing (a local model takes minutes)
        first = await lines.__anext__()
        if first is None:
            return 0
        lines = _after(first, lines)
    approvals = TerminalApprovals()
    pm.register(approvals, "dsh-cli-approvals")
    async with agent_session(args, pm) as (harness, agent, renderer):
        prompt = "> " if typed else ""
        async with anyio.create_task_group() as tg:
            renderer.on_closed = tg.cancel_scope.cancel  # no one reads the answers any more
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
            async for line in lines:
                if not typed:  # a script: each line when a person would type it
                    await _idle_or_asking(agent, approvals)
                if line is None or line.strip() in ("/quit", "/exit"):
                    break
                if approvals.answer(line):
                    continue
                command, _, rest = line.strip().partition(" ")
                if command == "/compact":
                    if typed:  # runs beside a turn; the prompt comes back at once
                        tg.start_soon(_compact, harness, agent, prompt_when_idle)
                    else:  # a script's next line waits for it
                        await _compact(harness, agent, prompt_when_idle)
                    continue
                if command == "/resume":
                    agent = await _resume(harness, agent, rest.strip(), renderer)
                    tg.start_soon(prompt_when_idle)
                    continue
                if _handle(line, harness, agent) or (
                    agent.agent.status == "idle" and not agent.agent.inbox.queued
                ):
                    tg.start_soon(prompt_when_idle)
            approvals.close()  # no one will answer a question from now on
            await agent.when_idle()
            tg.cancel_scope.cancel()
    if renderer.closed:
        return CLOSED_STATUS
    return 1 if renderer.agent_errors else 0  # e.g. the session could not be saved


async def _after(first: str, rest: AsyncIterator[str | None]) -> AsyncIterator[str | None]:
    yield first
    async for line in rest:
        yield line


async def _idle_or_asking(agent: AgentHandle, approvals: TerminalApprovals) -> None:
    """Wait until the agent is idle or a permission question waits for its answer."""
    async with anyio.create_task_group() as tg:

        async def first(wait: Callable[[], Awaitable[None]]) -> None:
            await wait()
            tg.cancel_scope.cancel()

        tg.start_soon(first, agent.when_idle)
        tg.start_soon(first, approvals.question)


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
    """``/resume ID``: continue a stored session in place of the current one. The
    current agent is kept when the agent is busy or the session cannot be loaded."""
    if not session_id:
        print("  /resume needs a session id (see `dsh sessions list`)", file=sys.stderr)
        return agent
    if agent.agent.status != "idle" or agent.agent.inbox.queued:
        print(
            "  /resume: the agent is working; wait for the turn to end (or cancel it "
            "with Ctrl-C) and resume again",
            file=sys.stderr,
        )
        return agent
    try:
        service = await harness.relay.session_persistence()
        if service is not None:  # else load_stored says so
            session_id = await find_session(service, session_id)  # a unique prefix will do
        stored = await harness.agents.load_stored(session_id)
    except DshError as error:
        print(f"  /resume: {error}; this chat goes on", file=sys.stderr)
        return agent
    # On the chat's model: what the config says now for the agent that created the
    # session, over the options stored with it (a rule tightened since applies).
    options = resume_options(harness, stored, str(agent.agent.options.get("model")))
    await agent.dispose()
    try:
        resumed = await harness.agents.resume_stored(agent.id, stored, options)
    except DshError as error:  # refused (its options, say): the chat goes on anew
        print(f"  /resume: {error}; a new session starts", file=sys.stderr)
        resumed = await harness.agents.create(agent.id, options=options)
    renderer.session_id = resumed.session.id
    turns = resumed.agent.turns
    print(f"  session {resumed.session.id} ({so_far(turns)})", file=sys.stderr)
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
            model = agent.agent.options.get("model")
            if rest.strip():  # not a switch: a session's model is chosen when it starts
                print(
                    f"  /model only shows the model ({model}); to go on with another, quit "
                    f"and run dsh chat -m {rest.strip()} --continue",
                    file=sys.stderr,
                )
            else:
                print(f"  {model}", file=sys.stderr)
        else:
            known = "/queue TEXT, /resume ID, /compact, /plugins, /model, /quit"
            print(f"  unknown command {command} (try {known})", file=sys.stderr)
        return False
    if busy:
        agent.steer(text)
        return False
    agent.send(text)
    return True
