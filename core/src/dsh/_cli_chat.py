"""``dsh chat``: an agent in the terminal, talked to line by line.

While the agent is idle a line starts a turn; while it runs, a line steers the running
turn and ``/queue TEXT`` queues TEXT for the next turn. Ctrl-C once cancels the running
turn (the agent stays); twice in a row, or at an idle prompt, quits (the line editor
clears a line half typed at an idle prompt instead, and an answer half typed at a
permission question as well). Lines from a pipe
or a file are taken one at a time, each once the agent is idle or asks a question, as
someone watching would type them. At the end of input (Ctrl-D, or the end of a piped or
redirected file) a pending permission question is denied and chat quits once the agent
is idle. At a terminal, lines come from the line editor of ``_cli_editor`` when
prompt_toolkit is installed (the ``chat`` extra), else from the terminal's canonical
mode (``_cli_terminal.lines_typed``).

Exit status: 1 if writing the output failed or an agent met an error outside a turn (a
failed session flush); 141 if the output was closed; 1 if the lines came from a pipe or
a file and any turn ended with reason ``error`` or any slash command failed (an unknown
one, one missing its argument or refusing it, a ``/resume`` or a plugin's command that
could not be done: the lines after it still ran): a script sees the error no other
way; else 0, at a terminal even after such a turn or command (the person saw the error
and went on, as in a shell). SIGHUP and SIGTERM end it with 129 and 143
(``until_terminated``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import nullcontext
from functools import partial
from typing import TYPE_CHECKING

import anyio

from dsh._cli_agent import agent_session, cli_harness, first_agent
from dsh._cli_approvals import TerminalApprovals, asks_at_terminal
from dsh._cli_chat_commands import COMMAND, ChatCommands, chat_commands, run_command
from dsh._cli_continue import chat_command, stored_to_continue
from dsh._cli_editor import line_editor
from dsh._cli_plugins import APPROVALS, loaded
from dsh._cli_resume import resume
from dsh._cli_screen import terminal_streams
from dsh._cli_signals import ending, on_interrupt
from dsh._cli_terminal import PromptLine, drop_typed, lines_typed, taken
from dsh._render import CLOSED_STATUS, shorten
from dsh._visible import visible
from dsh.commands import ChatCommandContext

if TYPE_CHECKING:
    from dsh._cli_editor import LineEditor
    from dsh.agent import AgentHandle
    from dsh.commands import ChatCommand
    from dsh.harness import Harness
    from dsh.plugins import PluginManager

__all__ = ["chat"]


async def chat(args: argparse.Namespace, pm: PluginManager) -> int:
    commands = chat_commands(pm)  # a clash stops the chat before it starts
    editor = line_editor() if sys.stdin.isatty() else None
    with terminal_streams() if editor is None else editor.streams():
        return await _chat(args, pm, editor, commands)


async def _nothing_asked(args: argparse.Namespace, pm: PluginManager) -> int:
    """Empty input: 0, after the checks chat makes before its first line (dsh.yml, -m
    and its key, the session --continue or --session names, and that no other process
    continues it), so that a script learns of a mistake that input would have hit; no
    agent and no model is started."""
    from dsh._claims import claimable
    from dsh.llm.choose import refuse_keyless

    async with cli_harness(args, pm) as harness:
        stored = await stored_to_continue(harness, args)
        refuse_keyless(harness, first_agent(harness, args.model, stored)[1])
        if stored is not None:  # in use elsewhere: refused as the first line's would be
            await claimable(harness.relay, stored.id, stored.events, harness)
    return 0


async def _chat(
    args: argparse.Namespace, pm: PluginManager, editor: LineEditor | None, commands: ChatCommands
) -> int:
    """The chat, its lines from ``editor`` (None: the terminal in canonical mode, or a
    pipe or a file), with the plugins' ``commands``."""
    typed = sys.stdin.isatty()
    prompt = PromptLine("> " if typed else "")  # without the editor
    lines = lines_typed(prompt) if editor is None else editor.lines()
    if not typed:  # a script: with nothing in it, start nothing (a local model takes minutes)
        first = await lines.__anext__()
        if first is None:
            return await _nothing_asked(args, pm)
        lines = _after(first, lines)
    approvals = TerminalApprovals()
    if not typed or asks_at_terminal():  # a script answers; typed, the question is seen
        pm.register(approvals, APPROVALS)
    else:  # stderr elsewhere: a call that needs asking is denied, said once
        from dsh._cli_unasked import UnaskedWarning

        pm.register(UnaskedWarning(pm), APPROVALS)
    async with (
        agent_session(args, pm) as (harness, agent, renderer),
        nullcontext() if editor is None else editor.running(),
        anyio.create_task_group() as tg,
    ):
        renderer.on_closed = tg.cancel_scope.cancel  # no one reads the answers any more
        last_sigint = 0.0
        running: list[anyio.CancelScope] = []  # a plugin's command under way
        failures: list[str] = []  # what the slash commands that failed said

        def idle() -> bool:
            return agent.agent.status == "idle" and not agent.agent.inbox.queued

        def again() -> bool:  # a second Ctrl-C in a row: it quits
            return anyio.current_time() - last_sigint < 2.0

        def interrupt() -> bool:  # True: it quits (a Ctrl-C after it hurries the way out)
            nonlocal last_sigint
            now = anyio.current_time()
            if running and not again():  # stop it, not the chat
                last_sigint = now
                running[-1].cancel()
                return False
            if idle() or again():
                if not prompt.open:  # what the quitting shows (a turn's end) not after ^C
                    print(after_ctrl_c(), end="", file=sys.stderr, flush=True)
                prompt.end()
                tg.cancel_scope.cancel()
                return True
            last_sigint = now
            inbox = agent.agent.inbox
            dropped = [*inbox.queued, *inbox.steering]
            agent.cancel()
            stopped(f"(cancelled{_dropped(dropped)}; Ctrl-C again to quit)")
            return False

        def stopped(note: str) -> None:
            """What Ctrl-C stopped, on a line of its own (``after_ctrl_c``)."""
            print(after_ctrl_c() + note, file=sys.stderr)

        def after_ctrl_c() -> str:
            """What starts a line of its own after Ctrl-C: the answer's line is ended
            if unfinished, or, without the editor, the line the terminal echoed ``^C``
            on is cleared to be written over (a ``kill -INT`` echoes none: no blank line
            is left either); on a ``dumb`` terminal, which may not know how to clear a
            line, a new line. What was typed on that line is cleared with it, and
            dropped from the terminal's input as Ctrl-C drops it: a ``kill -INT`` leaves
            it there, and it would be sent, unseen, with the next line."""
            echoed = typed and editor is None and sys.stderr.isatty()
            ended = renderer.end_terminal_line()  # the line ^C is on
            if not echoed or ended:
                return ""
            if os.environ.get("TERM") == "dumb":
                return "\n"
            drop_typed()
            return "\r\x1b[K"

        tg.start_soon(_interrupts_to, interrupt)
        if editor is not None:  # the editor shows "> " itself; Ctrl-C is a key there
            editor.ready = lambda: idle() or approvals.asking
            editor.on_interrupt = partial(_by_key, interrupt)
            # Ctrl-C that would quit clears a line half typed instead (not a second one)
            editor.clears_line = lambda: idle() and not running and not again()
            editor.asking = lambda: approvals.asking  # Ctrl-C drops the answer typed too
            editor.steer_of = _prompt_of  # a line sent while the agent works: shown as a steer
            approvals.set_aside = editor.set_aside  # a line half typed waits out a question

        waiting = False  # a prompt_when_idle waits: another shows nothing more

        async def prompt_when_idle() -> None:
            nonlocal waiting
            if waiting:  # its prompt comes when the agent is idle: once, not "> > "
                return
            waiting = True
            try:
                await agent.when_idle()
            finally:
                waiting = False
            if editor is not None:
                editor.refresh()
            elif not running:  # its answer would follow "> " on its line: shown after
                prompt.show()

        async def plugin_command(
            plugin: str, command: ChatCommand, context: ChatCommandContext
        ) -> None:
            await run_command(
                plugin, command, context, running, partial(_failed, failures), stopped
            )
            await prompt_when_idle()

        tg.start_soon(prompt_when_idle)
        async for line in lines:
            if not typed:  # a script: each line when a person would type it
                await _idle_or_asking(agent, approvals)
            if line is None or line.strip() in ("/quit", "/exit"):
                break
            line = taken(line)  # now, not when it was read ahead: its note beside it
            if approvals.asking and COMMAND.match(line.strip()):  # /help is no refusal
                _failed(failures, "  (a question waits for y, a or n: the command was not run)")
                continue
            if approvals.answer(line):
                continue
            if line.strip():  # a new turn or a command: Ctrl-C now is not "again"
                last_sigint = 0.0
            command, rest = _words(line)
            added = commands.by_name.get(command)
            if added is not None:
                context = ChatCommandContext(agent, rest.strip(), harness)
                if typed:  # runs beside a turn; the prompt comes back at once
                    tg.start_soon(plugin_command, *added, context)
                else:  # a script's next line waits for it
                    await plugin_command(*added, context)
                continue
            if command == "/model" and rest.strip():  # not a switch: chosen at the start
                _failed(failures, await _model_refused(harness, args, agent, rest.strip()))
                continue
            if command == "/resume":
                agent = await resume(
                    harness, agent, rest.strip(), renderer, partial(_failed, failures)
                )
                tg.start_soon(prompt_when_idle)
                continue
            shown = None if editor is None else renderer.steers_shown
            if _handle(line, harness, agent, commands, failures, shown) or (
                agent.agent.status == "idle" and not agent.agent.inbox.queued
            ):
                tg.start_soon(prompt_when_idle)
        approvals.close()  # no one will answer a question from now on
        prompt.end()
        if editor is not None:
            editor.end_input()
        await agent.when_idle()
        tg.cancel_scope.cancel()
    if renderer.failed is not None:
        return 1
    if renderer.closed:
        return CLOSED_STATUS
    if renderer.agent_errors:  # e.g. the session could not be saved
        return 1
    # a script cannot see a turn's error or a failed command: its status says so (a
    # person at the terminal saw it and went on, as in a shell)
    return 1 if (renderer.errored_turns or failures) and not typed else 0


def _by_key(interrupt: Callable[[], bool]) -> None:
    """Ctrl-C typed to the line editor (a key: no signal); if it quits, ``ending``."""
    if interrupt():
        ending()


async def _interrupts_to(interrupt: Callable[[], bool]) -> None:
    """Ctrl-C (SIGINT) calls ``interrupt`` until the chat's task group ends."""
    with on_interrupt(interrupt):
        await anyio.sleep_forever()


def _words(line: str) -> tuple[str, str]:
    """A line's first word and the rest (split at any whitespace, a tab too)."""
    first, *rest = line.split(None, 1) or [""]
    return first, rest[0] if rest else ""


def _failed(failures: list[str], message: str) -> None:
    """Say on stderr why a slash command failed, and keep it in ``failures``: a script's
    exit status says it too."""
    print(message, file=sys.stderr)
    failures.append(message)


def _dropped(prompts: list[str]) -> str:
    """What a cancel dropped besides the turn, in a few words (nothing: "")."""
    if not prompts:
        return ""
    shown = "; ".join(shorten(prompt, 60) for prompt in prompts[:3])
    more = f" and {len(prompts) - 3} more" if len(prompts) > 3 else ""
    noun = "line" if len(prompts) == 1 else "lines"
    return f", and dropped {len(prompts)} waiting {noun}: {shown}{more}"


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


async def _model_refused(
    harness: Harness, args: argparse.Namespace, agent: AgentHandle, wanted: str
) -> str:
    """What ``/model NAME`` says: a session's model is chosen when it starts, so how to
    go on with this session on ``wanted`` (a new chat when the session is not stored)."""
    model = visible(str(agent.agent.options.get("model")))
    stored = await harness.relay.session_persistence(harness) is not None
    run = chat_command(harness.workspace, args, agent.session.id if stored else None, wanted)
    return f"  /model only shows the model ({model}); to go on with another, quit and run {run}"


def _prompt_of(line: str) -> str | None:
    """The prompt a line sends (``//TEXT`` sends ``/TEXT``); None for an empty line or a
    command."""
    text = line.strip()
    if text.startswith("//"):  # a prompt that starts with / (`//etc is empty`)
        return text[1:]
    return None if not text or COMMAND.match(text) else text


def _handle(
    line: str,
    harness: Harness,
    agent: AgentHandle,
    commands: ChatCommands,
    failures: list[str],
    shown: list[str] | None = None,
) -> bool:
    """Act on one typed line; True when it started a turn. A command that failed is
    added to ``failures``; a steer to ``shown`` (the line editor has shown it as one:
    the renderer does not again)."""
    text = line.strip()
    if not text:
        return False
    busy = agent.agent.status == "running" or bool(agent.agent.inbox.queued)
    prompt = _prompt_of(text)
    if prompt is None:
        command, rest = _words(text)
        if command == "/queue" and rest:
            agent.send(rest)
            return not busy
        if command == "/queue":
            _failed(failures, "  /queue needs the text to queue: /queue TEXT")
        if command in ("/plugins", "/help") and rest:  # not a question about REST
            _failed(failures, f"  {command} takes nothing after it; try {command} alone")
        elif command == "/plugins":
            print(*(f"  {line}" for line in loaded(harness.pm)), sep="\n", file=sys.stderr)
        elif command == "/model":  # with a name, refused before (_model_refused)
            print(f"  {visible(str(agent.agent.options.get('model')))}", file=sys.stderr)
        elif command == "/help":
            print(commands.help(), file=sys.stderr)
        elif command in ("/quit", "/exit"):  # only the command alone quits
            _failed(failures, f"  {command} takes nothing after it; {command} alone quits")
        elif command != "/queue":
            _failed(failures, commands.unknown(command))
        return False
    if busy:
        agent.steer(prompt)
        if shown is not None:
            shown.append(prompt)
        return False
    agent.send(prompt)
    return True
