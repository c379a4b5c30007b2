"""``dsh run`` (and what ``dsh chat`` shares with it): an agent in the terminal.

``run`` sends one prompt and exits when the turn ends: status 1 if it ended ``error`` or
the session could not be saved, 130 if it was interrupted, 141 if its output was closed,
129 if its terminal closed and 143 if it was terminated (``until_terminated``).
``agent_session`` builds the harness and the agent for both commands (``dsh chat`` is
in ``_cli_chat``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from dsh._cli_continue import chat_command, stored_to_continue
from dsh._cli_plugins import APPROVALS, RENDERER
from dsh._cli_signals import lines_ended_by, on_interrupt
from dsh._render import CLOSED_STATUS, Renderer
from dsh._visible import visible
from dsh.errors import ConfigError, DshError

if TYPE_CHECKING:
    from dsh._cli_approvals import TerminalApprovals
    from dsh.agent import AgentHandle
    from dsh.config import AgentConfig, Config
    from dsh.harness import Harness
    from dsh.llm._http import HttpModel
    from dsh.llm.choose import Choice
    from dsh.persistence import StoredSession
    from dsh.plugins import PluginManager

__all__ = ["agent_session", "check_config", "cli_harness", "first_agent", "run"]

#: The small local model tends to repeat a tool call; bound its turns unless dsh.yml says.
LOCAL_MAX_STEPS = 8

SYSTEM_PROMPT = (
    "You are dsh, a coding agent working in the directory {workspace}. Use the tools to "
    "read, search and change files and to run commands there. Be brief; say what you did."
)


@asynccontextmanager
async def agent_session(
    args: argparse.Namespace, pm: PluginManager, *, config: Config | None = None
) -> AsyncIterator[tuple[Harness, AgentHandle, Renderer]]:
    """A harness over dsh.yml (``config``: read already) and the agent the command
    talks to, with its renderer."""
    from dsh.llm.choose import refuse_keyless, starts_local

    renderer = Renderer(sys.stdout, sys.stderr, json=getattr(args, "json", False))
    pm.register(renderer, RENDERER)
    async with cli_harness(args, pm, config=config) as harness:
        renderer.tools = harness.tools
        stored = await stored_to_continue(harness, args)
        base, choice = first_agent(harness, args.model, stored)
        refuse_keyless(harness, choice)
        server = None
        if starts_local(harness, choice):
            from dsh.llm.local import start_local

            server = await start_local(harness, why=choice.why)
        print(visible(f"dsh: model {choice.name} ({choice.why})"), file=sys.stderr)
        agent_id = base.id if base is not None else "main"
        started = harness.agents.get(agent_id)
        if started is not None:  # started from dsh.yml; the command line chose its model
            await started.dispose()
        try:
            if stored is None:
                local = server is not None
                options = agent_options(base, choice.name, harness.workspace, local=local)
                agent = await harness.agents.create(agent_id, options=_told(options, args))
                if await harness.relay.session_persistence(harness) is not None:  # it is kept
                    print(f"dsh: new session {agent.session.id}", file=sys.stderr)
            else:
                options = _told(resume_options(harness, stored, choice.name), args)
                agent = await harness.agents.resume_stored(agent_id, stored, options)
                from dsh.persistence import shown_id

                said = continuing(stored, agent.agent.turns)
                shown = shown_id(stored.id)
                print(visible(f"dsh: continuing session {shown} ({said})"), file=sys.stderr)
            renderer.session_id = agent.session.id
            with lines_ended_by(renderer.end_terminal_line):
                yield harness, agent, renderer
            await agent.dispose()  # flushed before the local server goes away
        finally:
            if server is not None:
                server.stop()


def cli_harness(
    args: argparse.Namespace,
    pm: PluginManager,
    *,
    starts_agents: bool = True,
    config: Config | None = None,
) -> Harness:
    """The harness of a command: over dsh.yml (``config`` when it was read already:
    ``CommandContext.run_prompt``, ``config check``; else ``-c``, else the workspace's),
    in the workspace (``--cwd``, else the current directory), as plugin commands get it.
    ``starts_agents=False``: for a command that only lists what it holds (settings for
    plugins that do not run are warnings; see ``Harness``)."""
    from dsh.commands import CommandContext

    workspace = (args.cwd or Path.cwd()).resolve()
    context = CommandContext(args, pm, args.config, workspace, config)
    return context.harness(starts_agents=starts_agents)


def first_agent(
    harness: Harness, requested: str | None, stored: StoredSession | None = None
) -> tuple[AgentConfig | None, Choice]:
    """The agent ``dsh run`` and ``dsh chat`` talk to and its model. The first agent of
    dsh.yml, if any, gives the id and every option (model, system_prompt, queue_mode,
    max_steps, plugin options); ``requested`` (-m) overrides its model. A session
    continued (``stored``) keeps the model it was created with unless -m says."""
    from dsh.llm.choose import choose_model, stored_preference

    base = harness.config.agents[0] if harness.config.agents else None
    preferred = None if stored is None else stored_preference(stored)
    if preferred is None and base is not None and base.model:
        preferred = (base.model, f"the model of agent {base.id!r} in {harness.config.source}")
    return base, choose_model(harness, requested, preferred=preferred)


def agent_options(
    base: AgentConfig | None, model: str, workspace: Path, *, local: bool
) -> dict[str, Any]:
    """The agent's options: the first agent's of dsh.yml (as the harness would start
    it), with ``model`` and the CLI's default system prompt when it has none."""
    options: dict[str, Any] = {
        "system_prompt": SYSTEM_PROMPT.format(workspace=workspace),
        **({"max_steps": LOCAL_MAX_STEPS} if local else {}),
    }
    options.update(base.agent_options(model) if base is not None else {"model": model})
    return options


def resume_options(harness: Harness, stored: StoredSession, model: str) -> dict[str, Any]:
    """The options of an agent that continues ``stored`` from the command line, on
    ``model``: what the config now says for the agent that created the session, over the
    options stored with it, over ``dsh run``'s defaults. A rule tightened in dsh.yml
    since applies; options given in code and stored stay, unless the config sets them."""
    from dsh._resume import stored_options
    from dsh._stored_options import creator

    local = model == "local" and "local" not in harness.config.models
    options = agent_options(None, model, harness.workspace, local=local)
    kept = stored_options(stored)
    if kept is not None:
        options.update(kept)
        if _is_default_prompt(kept.get("system_prompt")):  # it names the old workspace
            options["system_prompt"] = SYSTEM_PROMPT.format(workspace=harness.workspace)
    for entry in harness.config.agents:
        if entry.id == creator(stored):
            options.update(entry.own_options())
    options["model"] = model
    return options


def _told(options: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """``options`` with the system prompt ``-s`` gives, if any."""
    system = getattr(args, "system", None)
    return options if system is None else {**options, "system_prompt": system}


def continuing(stored: StoredSession, turns: int) -> str:
    """What a session taken up again is, in a few words: the prompt it began with (to
    tell it from the others at a glance) and its turns (``dsh run --continue``, chat's
    start-up and ``/resume``)."""
    from dsh._render import shorten

    first = next((e for e in stored.events if e.type == "user/message"), None)
    said = "no prompt yet"
    if first is not None:
        said = shorten(str(first.data.get("content", "")), 40)  # its escapes: once, not repr's
        quote = '"' if "'" in said and '"' not in said else "'"
        said = f"{quote}{said}{quote}"
    return f"{said}, {turns} turn so far" if turns == 1 else f"{said}, {turns} turns so far"


def _is_default_prompt(prompt: object) -> bool:
    """Whether ``prompt`` is dsh run's own system prompt, for whichever workspace."""
    before, _, after = SYSTEM_PROMPT.partition("{workspace}")
    return isinstance(prompt, str) and prompt.startswith(before) and prompt.endswith(after)


async def run(args: argparse.Namespace, pm: PluginManager, *, config: Config | None = None) -> int:
    """``dsh run``. Once the terminal has gone (its window closed: writes fail with EIO)
    what is written to it goes to /dev/null (``terminal_streams``): SIGHUP stops the
    turn (``until_terminated``); with SIGHUP ignored the turn goes on to its end."""
    from dsh._cli_screen import terminal_streams

    with terminal_streams():
        return await _run(args, pm, config)


async def _run(args: argparse.Namespace, pm: PluginManager, config: Config | None) -> int:
    from dsh._cli_approvals import TerminalApprovals, asks_at_terminal

    # in a terminal, a call that needs a person's approval is put to them, as in chat;
    # asked where they would not see it (stderr redirected: 2>log) it would wait unseen
    approvals = TerminalApprovals() if asks_at_terminal() else None
    if approvals is not None:
        pm.register(approvals, APPROVALS)
    else:  # a call that needs asking is denied: said once
        from dsh._cli_unasked import UnaskedWarning

        pm.register(UnaskedWarning(pm), APPROVALS)
    async with agent_session(args, pm, config=config) as (harness, agent, renderer):
        renderer.on_closed = agent.cancel  # no one reads the answer any more
        agent.send(args.prompt)
        interrupted = False
        async with anyio.create_task_group() as tg:
            if approvals is not None:
                stored = await harness.relay.session_persistence(harness) is not None
                model = str(agent.agent.options.get("model"))  # kept: -m need not say it
                go_on = (
                    chat_command(harness.workspace, args, agent.session.id, recorded=model)
                    if stored
                    else None
                )
                tg.start_soon(_answers, approvals, go_on)

            def on_sigint() -> bool:  # again: until_terminated hurries the way out
                nonlocal interrupted
                interrupted = True
                # the line the terminal echoed ^C on is ended (an answer's, or a line of
                # its own: at a question, before the first word), so that what is said
                # next is not written after the ^C
                ended = renderer.end_terminal_line()
                if approvals is not None and not ended:  # asked at a terminal: stderr is one
                    print(file=sys.stderr, flush=True)
                agent.cancel()
                return True

            with on_interrupt(on_sigint):
                await agent.when_idle()
            tg.cancel_scope.cancel()
    if renderer.failed is not None:
        return 1
    if renderer.closed:
        return CLOSED_STATUS
    if interrupted:
        return 130
    end = renderer.last_end or {}
    return 1 if end.get("reason") == "error" or renderer.agent_errors else 0


async def _answers(approvals: TerminalApprovals, go_on: str | None) -> None:
    """Each line typed answers the question waiting, if any; the end of input denies.
    Another line is told where to go on (``go_on``: the command, None when the session
    is not stored)."""
    from dsh._cli_terminal import lines_typed, taken

    where = "" if go_on is None else f"; {go_on} goes on with this session"
    async for line in lines_typed():
        if line is None:
            approvals.close()
            return
        if not (approvals.asking and approvals.answer(taken(line))) and line.strip():
            print(f"  (no question is waiting: dsh run takes one prompt{where})", file=sys.stderr)


def check_config(args: argparse.Namespace, pm: PluginManager) -> int:
    """``dsh config check``: validate dsh.yml and every plugin section. What it says of
    a problem has the keys hidden, as ``dsh run`` has (a value quoted may be one)."""
    from dsh._cli_args import config_not_found
    from dsh._cli_keys import said as _said
    from dsh._cli_keys import sayer
    from dsh._register_calls import checked
    from dsh.config import add_settings, find_config, load_config

    settings: dict[str, Any] = {}
    pm.relay.register_settings(checked("register_settings", partial(add_settings, settings)))
    try:
        path = args.config or find_config(Path(args.cwd or os.getcwd()))
    except DshError as error:
        print(_said(f"dsh: {error}", args), file=sys.stderr)
        return 1
    if path is None:  # logged, as the check's warnings: an unwritable stderr fails nothing
        from dsh._secrets import get_logger

        get_logger("dsh.config").warning("no dsh.yml here; defaults apply")
        return _plugins_start(args, pm)
    from dsh._config_registered import RegisteredModels
    from dsh._plugin_off import model_off

    registered = RegisteredModels(pm)
    try:
        config = load_config(
            path,
            settings=settings,
            blocked=pm.is_blocked,
            left_out=pm.is_left_out,
            loaded=pm.has_plugin,
            registered=registered.of,
            missing=pm.is_missing,
            model_off=model_off(pm),
        )
        if config.models:  # as a harness would build them (nothing is contacted)
            from dsh._plugin_off import provider_off
            from dsh.llm.providers import build_configured

            built = build_configured(config, registered.names(), off=provider_off(pm))
            _warn_of_keys(config, built)
    except ConfigError as error:  # every problem, one line each
        say = sayer(args)  # the file read for its keys once, not for each line
        for problem in error.problems:
            said = problem.problem + config_not_found(problem, args)
            print(say(f"dsh: {said}"), file=sys.stderr)
        if error.more:
            print(visible(f"dsh: {len(error.problems)} problems in {path}"), file=sys.stderr)
        return 1
    except DshError as error:
        print(_said(f"dsh: {error}", args), file=sys.stderr)
        return 1
    status = _plugins_start(args, pm, config)
    if status == 0:
        print(visible(f"{path}: ok"))
    return status


def _warn_of_keys(config: Config, models: list[HttpModel]) -> None:
    """A warning for each model whose API key cannot be read here (its variable unset,
    or holding what no HTTP header can): each of its requests would fail, but the file
    is right and the variable may be set where dsh runs. Logged, as the config's other
    warnings: a stderr that cannot be written (full, closed) does not fail the check."""
    from dsh._secrets import get_logger
    from dsh.errors import ModelError

    for model in models:
        try:
            model.api_key()
        except ModelError as error:
            where = config.where("models", model.name, "api_key_env")
            get_logger("dsh.config").warning("warning: %s: %s", where, error.message)


def _plugins_start(
    args: argparse.Namespace, pm: PluginManager, config: Config | None = None
) -> int:
    """Start the plugins as ``dsh run`` would, for their own start-up checks (a session
    directory that cannot be written), and check the agent it would create as it would
    (a plugin's setting naming ``local`` that nothing starts); no model is contacted."""
    from dsh._cli_keys import said as _said
    from dsh._config_local import check_local
    from dsh.errors import HookError
    from dsh.llm.choose import starts_local

    async def start() -> None:
        async with cli_harness(args, pm, config=config) as harness:
            base, choice = first_agent(harness, None)  # as dsh run without -m (docs)
            if not starts_local(harness, choice):
                options = agent_options(base, choice.name, harness.workspace, local=False)
                check_local(harness, base.id if base is not None else "main", options)

    try:
        anyio.run(start)
    except HookError as error:  # a plugin's start-up hook: said as dsh run says it
        from dsh._left_out import leave_out_hint

        said = error.for_user() + leave_out_hint(error, pm)
        print(_said(f"dsh: {said}", args), file=sys.stderr)
        return 1
    except DshError as error:  # dsh's refusal of what a register_* hook registered too
        from dsh._left_out import leave_out_hint

        print(_said(f"dsh: {error}{leave_out_hint(error, pm)}", args), file=sys.stderr)
        return 1
    return 0
