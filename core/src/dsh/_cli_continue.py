"""``--continue`` and ``--session ID`` of ``dsh run`` and ``dsh chat``: the stored session
they name, or why there is none and what to do (``dsh._no_store`` says why no plugin
stores sessions, naming the switch that turned ``persistence`` off)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from dsh._no_store import no_store
from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.harness import Harness
    from dsh.persistence import SessionHeader, StoredSession

__all__ = ["chat_command", "no_store", "stored_to_continue"]


async def stored_to_continue(harness: Harness, args: argparse.Namespace) -> StoredSession | None:
    """The stored session ``--continue`` (the last one updated in this workspace) or
    ``--session ID`` (an id, or a unique prefix of one) names, loaded; None when neither
    was given."""
    from dsh.persistence import find_session, last_in

    wanted: str | None = getattr(args, "session", None)
    latest = getattr(args, "continue_", False)
    if wanted is None and not latest:
        return None
    flag = "--continue" if wanted is None else f"--session {wanted}"
    service = await harness.relay.session_persistence()
    if service is None:
        raise DshError(f"{flag}: no plugin stores sessions ({no_store(harness.pm)})")
    if wanted is None:
        headers = await service.list()
        if not headers:
            raise DshError("--continue: there is no stored session yet; start one without it")
        here = last_in(headers, str(harness.workspace))
        if here is None:
            raise DshError(_none_here(headers, harness.workspace, args))
        wanted = here.id
    else:
        wanted = await find_session(service, wanted)
    return await harness.agents.load_stored(wanted)


def _none_here(headers: list[SessionHeader], workspace: Path, args: argparse.Namespace) -> str:
    """Why ``--continue`` has nothing to take here, and what would take what: the last
    session of a directory above (a project's root, seen from its subdirectory), else
    the store's last."""
    from dsh.persistence import last_above

    said = f"--continue: no stored session last ran in {workspace}"
    above = last_above(headers, str(workspace))
    if above is not None:
        there = shlex.quote(above.workspace)
        command = getattr(args, "command", None) or "run"
        return (
            f"{said} (the last one of {above.workspace}, above it, is {above.id}: `dsh "
            f"--cwd {there} {command} --continue` goes on with it there, --session "
            f"{shlex.quote(above.id)} here)"
        )
    readable = [header for header in headers if not header.error]
    if not readable:  # the store reads none of its files: nothing --session would take
        return f"{said} (the store holds no session it can read: `dsh sessions list` says why)"
    last = readable[0]
    return (
        f"{said} (the last one, {last.id}, is from {last.workspace}; --session "
        f"{shlex.quote(last.id)} continues it here)"
    )


def chat_command(
    harness: Harness, args: argparse.Namespace, session_id: str | None, model: str | None = None
) -> str:
    """The command that goes on with session ``session_id`` in a chat (None: a new one),
    to paste into a shell: ``dsh [-c FILE] [--cwd DIR] chat [-m MODEL] --session ID``,
    each word quoted as a shell needs it (an id may hold spaces and quotes: an agent's
    id begins it), its control characters shown escaped (``visible``: a model's name,
    a directory's). ``--cwd`` when the workspace is not the current directory
    (``--session`` goes on in the directory it is run in)."""
    from dsh._render import visible

    words = ["dsh"]
    if getattr(args, "config", None) is not None:
        words += ["-c", str(args.config)]
    try:
        here: Path | None = Path.cwd().resolve()
    except OSError:  # the current directory was removed
        here = None
    if here != harness.workspace:
        words += ["--cwd", str(harness.workspace)]
    words.append("chat")
    if model is not None:
        words += ["-m", model]
    if session_id is not None:
        words += ["--session", session_id]
    return visible(shlex.join(words))
