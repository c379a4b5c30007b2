"""``dsh sessions``: list, show, resume and delete stored sessions.

``list``, ``show`` and ``delete`` read the store through a harness that starts no agent
(``CommandContext.harness(starts_agents=False)``, over ``-c FILE``, else ``$DSH_CONFIG``
or ``dsh.yml`` in the workspace): every plugin's ``harness_started`` has run, so they
read the store a harness with that config writes (dsh-persistence applies its
``persistence:`` section there), from whichever plugin answers ``session_persistence``.
Settings for a plugin that does not run and ``models:`` entries that cannot be built
are warnings there: they cannot change the store.
``resume`` runs a turn: it validates the config as ``dsh run`` does and applies the
section itself, and ``dsh run --session`` (``run_prompt``) starts the harness on the
config read then (the file is read once: ``-c <(...)`` is a pipe); it picks
the model with ``choose_model``: ``-m``, then the model the session was created with,
then ``model:`` in dsh.yml, then a provider key in the environment.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from dsh import DshError
from dsh.commands import Command, CommandContext, name_choices

if TYPE_CHECKING:
    from pydantic import BaseModel

    from dsh.config import Config
    from dsh.harness import Harness
    from dsh.persistence import SessionPersistence
    from dsh.plugins import PluginManager
    from dsh.session import SessionEvent
    from dsh_persistence._plugin import PersistencePlugin

__all__ = ["sessions_command"]


def sessions_command(plugin: PersistencePlugin) -> Command:
    async def run(context: CommandContext) -> int:
        return await _run(plugin, context)

    return Command(
        "sessions", "list, show, resume or delete stored sessions", run, configure=_configure
    )


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="stored sessions, most recent first")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument(
        "-n", "--limit", type=_count, metavar="N", help="show the N most recent (N >= 1)"
    )
    listing.add_argument(
        "--here",
        action="store_true",
        help="only those that last ran in this workspace (that --continue chooses from)",
    )
    show = actions.add_parser("show", help="a session's transcript")
    show.add_argument(
        "id",
        nargs="?",
        help="a session id, or a unique prefix of one (default: the last of this workspace)",
    )
    show.add_argument("--json", action="store_true", help="print the events as JSON lines")
    resume = actions.add_parser(
        "resume", help="continue a session with one more prompt, as dsh run --session ID"
    )
    resume.add_argument("id", help="a session id (or a unique prefix of one)")
    resume.add_argument(  # a default, or argparse names it required with the id
        "prompt",
        nargs="*",
        default=[],
        help=(
            "the next prompt, as dsh run's (words joined by spaces, - for stdin); none "
            "given: the text piped in on stdin (at a terminal, a prompt is needed)"
        ),
    )
    resume.add_argument(
        "-m", "--model", metavar="MODEL", default=argparse.SUPPRESS, help="as dsh -m"
    )
    resume.add_argument("--json", action="store_true", help="print session events as JSON lines")
    delete = actions.add_parser("delete", help="delete stored sessions")
    delete.add_argument("ids", nargs="+", metavar="ID", help="exact session ids")
    name_choices(actions)  # "the following arguments are required: {list,...}"


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


async def _run(plugin: PersistencePlugin, context: CommandContext) -> int:
    args = context.args
    if args.action == "resume":
        config = _load_config(context, context.find_config())
        from dsh_persistence._settings import filed_section

        section = filed_section(config.sections)
        workspace = (context.workspace or Path.cwd()).resolve()  # as the harness takes it
        plugin.configure(None if section is None else section.anchored(workspace))
        # the turn's harness takes the config read here: a pipe (-c <(...)) reads
        # nothing the second time
        # no harness asks: the service of the store just configured
        return await _resume(replace(context, config=config), await _service(context.pm))
    # settings for a plugin that does not run, and models that cannot be built, are
    # warnings in this harness: they cannot change the store
    async with context.harness(starts_agents=False) as harness:
        service = await _service(harness.pm, harness)
        if args.action == "list":
            return await _list(service, args, str(harness.workspace))
        if args.action == "show":
            return await _show(service, args, str(harness.workspace))
        return await _delete(service, args.ids)


async def _service(pm: PluginManager, harness: Harness | None = None) -> SessionPersistence:
    service = await pm.relay.session_persistence(harness)
    if service is None:
        raise DshError("no plugin stores sessions (is dsh-persistence disabled?)")
    return service


def _load_config(context: CommandContext, path: Path | None) -> Config:
    """Validate the config with every loaded plugin's settings, as the harness of the
    turn ``resume`` runs will: settings for a plugin that does not run are refused
    before the prompt is read."""
    from dsh.config import add_settings, load_config, models_off, registered_models

    settings: dict[str, type[BaseModel]] = {}
    pm = context.pm
    pm.relay.register_settings(partial(add_settings, settings))
    return load_config(
        path,
        settings=settings,
        blocked=pm.is_blocked,
        left_out=pm.is_left_out,
        missing=pm.is_missing,
        loaded=pm.has_plugin,
        registered=registered_models(pm),
        model_off=models_off(pm),
    )


async def _list(service: SessionPersistence, args: argparse.Namespace, workspace: str) -> int:
    from dsh.persistence import started_in
    from dsh_persistence._listing import is_terminal, json_rows, table

    headers = await service.list()
    if args.here:
        headers = started_in(headers, workspace)
    if args.limit is not None:
        headers = headers[: args.limit]
    if args.json:
        print(json_rows(headers))
        return 0
    if not headers:
        # say where dsh looked: a session "lost" is most often a store set elsewhere
        location = getattr(getattr(service, "backend", None), "location", "")
        shown = f"no stored sessions in {location}" if location else "no stored sessions"
        print(f"{shown} that last ran in {workspace}" if args.here else shown, file=sys.stderr)
        return 0
    sys.stdout.write(table(headers, terminal=is_terminal()))
    return 0


async def _show(service: SessionPersistence, args: argparse.Namespace, workspace: str) -> int:
    from dsh.commands import for_terminal
    from dsh.persistence import find_session, last_above, last_in, shown_id
    from dsh_persistence._listing import is_terminal, when
    from dsh_persistence._service import StoredSessions
    from dsh_persistence._transcript import transcript

    if args.id is None:  # the last one of this workspace, as `dsh run --continue` takes it
        headers = await service.list()
        if not headers:
            raise DshError("there is no stored session yet")
        here = last_in(headers, workspace)
        if here is None:
            said = f"no stored session last ran in {workspace}"
            above = last_above(headers, workspace)
            if above is not None:
                there = shlex.quote(above.workspace)
                raise DshError(
                    f"{said} (the last one of {above.workspace}, above it, is "
                    f"{shown_id(above.id)}: "
                    f"give its id, or run `dsh --cwd {there} sessions show`)"
                )
            last = next((header for header in headers if not header.error), None)
            if last is None:
                raise DshError(f"{said} (the store holds no session it can read)")
            raise DshError(
                f"{said} (the last one, {shown_id(last.id)}, is from {last.workspace}: give its id)"
            )
        session_id = here.id
    else:
        session_id = await find_session(service, args.id)
    loaded = None
    if isinstance(service, StoredSessions):  # with what loading added
        loaded = await service.inspect(session_id)
        stored = None if loaded is None else loaded.stored
    else:
        stored = await service.load(session_id)
    if stored is None:
        raise DshError(f"session {session_id!r} was deleted meanwhile")
    events, note = list(stored.events), ""
    if loaded is not None and loaded.closers:
        running = _turn_of(events[: loaded.kept])
        if (
            running is not None
            and isinstance(service, StoredSessions)
            and await service.in_use(session_id)
        ):
            events = events[: loaded.kept]  # not closed: the turn goes on
            note = f"(turn {running} is still running in another process)"
        else:
            note = (
                f"(the last turn was interrupted: {loaded.closers} closing events were "
                "added on load; they are stored when the session is resumed)"
            )
    if args.json:
        for event in events:
            print(event.to_json())
        return 0
    shown = for_terminal if is_terminal() else str
    print(f"session {shown_id(stored.id)}, created {when(stored.created)}")
    if stored.meta.get("parent"):
        parent = shown_id(str(stored.meta["parent"]))
        print(f"forked from {parent} at event {stored.meta.get('seed_length')}")
    sys.stdout.write(shown(transcript(events)))
    if note:
        print(note)
    return 0


def _turn_of(events: list[SessionEvent]) -> int | None:
    """The number of the last turn ``events`` start, None when they start none."""
    for event in reversed(events):
        if event.type == "turn/start":
            turn = event.data.get("turn")
            return turn if type(turn) is int else None
    return None


async def _delete(service: SessionPersistence, ids: list[str]) -> int:
    """Delete each id it can, as ``rm`` does: an id it cannot (not stored, empty, in
    use, a file that is not a session's, one it cannot remove) gets its line on stderr,
    status 1, and the ids after it are still deleted. A store it cannot use at all (a
    database locked by another process, a server it cannot reach) stops it: said once,
    status 2, as ``list`` and ``show`` say it, not tried again for every id."""
    from dsh.persistence import find_session, shown_id
    from dsh_persistence._errors import PersistenceError, SessionStoreUnusableError
    from dsh_persistence._files import quoted_id
    from dsh_persistence._service import StoredSessions

    status = 0
    for session_id in dict.fromkeys(ids):  # an id given twice is one session: once
        if not session_id:  # no store holds one: refused in show's and resume's words
            try:
                await find_session(service, session_id)
            except DshError as error:
                print(f"dsh: error: {error}", file=sys.stderr)
            status = 1
            continue
        try:
            if isinstance(service, StoredSessions):
                deleted, leftovers = await service.delete_counting(session_id)
            else:
                deleted, leftovers = await service.delete(session_id), 0
        except SessionStoreUnusableError:
            raise  # every id would fail alike (a locked database: its timeout each)
        # said, and the other ids are still deleted: in use, a file not a session's
        # (or a FIFO), one that cannot be removed
        except PersistenceError as error:
            print(f"dsh: error: {error}", file=sys.stderr)
            status = 1
            continue
        if deleted:
            print(f"deleted {shown_id(session_id)}")
        elif leftovers:  # a database's events without their session's row: gone now
            events = "1 leftover event" if leftovers == 1 else f"{leftovers} leftover events"
            print(f"deleted {events} of {shown_id(session_id)} (its session was not stored)")
        else:
            hint = await _whole_ids(service, session_id)
            said = f"no stored session {quoted_id(session_id)}{hint}"  # a long id cut
            print(f"dsh: error: {said}", file=sys.stderr)
            status = 1
    return status


async def _whole_ids(service: SessionPersistence, begun: str) -> str:
    """For an id that is only the start of stored ones: which (delete takes whole ids,
    so that a prefix never deletes a session no one named)."""
    from dsh.persistence import find_session, shown_id

    try:
        whole = await find_session(service, begun)
    except DshError:
        return ""
    return "" if whole == begun else f" (delete takes whole ids: {shown_id(whole)}?)"


async def _resume(context: CommandContext, service: SessionPersistence) -> int:
    from dsh.persistence import find_session

    args = context.args
    # an id that names no session is said first: not an example to paste that fails so
    session = await find_session(service, args.id)
    words = args.prompt
    if not words:  # the prompt is what is piped in
        if sys.stdin.isatty():
            # to paste, each word quoted (an id may hold spaces and quotes), with the same
            # -p, -c, --cwd and -m: the same store, workspace and model; "--" is shown
            # before an id that begins with "-"
            resume = context.command_line("sessions", "resume", "--", args.id, "what next?")
            chat = context.chat_command(args.id)
            raise DshError(
                f"resume needs a prompt: {resume} (or pipe one on stdin); an interactive "
                f"resume is {chat}"
            )
        words = ["-"]
    # read and checked as dsh run's: an empty prompt, bytes that are not UTF-8 refused;
    # its examples paste as a resume of this session (the prompt after the id)
    line = context.command_line("sessions", "resume", "--", args.id)
    prompt = await context.read_prompt(words, "sessions resume", command_line=line)
    # exactly `dsh run --session ID PROMPT`: its model choice, output and exit status
    return await context.run_prompt(
        prompt, session=session, json=args.json, command="sessions resume"
    )
