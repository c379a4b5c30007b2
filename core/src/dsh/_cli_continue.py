"""``--continue`` and ``--session ID`` of ``dsh run`` and ``dsh chat``: the stored session
they name, or why there is none and what to do (``dsh._no_store`` says why no plugin
stores sessions, naming the switch that turned ``persistence`` off)."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from dsh._no_store import no_store
from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.harness import Harness
    from dsh.persistence import SessionHeader, StoredSession

__all__ = ["chat_command", "command_line", "no_store", "stored_to_continue"]


async def stored_to_continue(harness: Harness, args: argparse.Namespace) -> StoredSession | None:
    """The stored session ``--continue`` (the last one updated in this workspace) or
    ``--session ID`` (an id, or a unique prefix of one) names, loaded; None when neither
    was given. Sessions the store cannot read say neither when nor where they last ran,
    so any of them may be this workspace's newer one: ``--continue`` says on stderr
    that it skipped them."""
    from dsh._resume import damaged
    from dsh.persistence import find_session, last_in, started_in

    wanted: str | None = getattr(args, "session", None)
    latest = getattr(args, "continue_", False)
    if wanted is None and not latest:
        return None
    flag = "--continue" if wanted is None else f"--session {wanted}"
    service = await harness.relay.session_persistence(harness)
    if service is None:
        raise DshError(f"{flag}: no plugin stores sessions ({no_store(harness.pm)})")
    if wanted is None:
        headers = await service.list()
        if not headers:
            raise DshError("--continue: there is no stored session yet; start one without it")
        here = last_in(headers, str(harness.workspace))
        if here is None:
            raise DshError(_none_here(headers, harness.workspace, args))
        skipped = sum(1 for header in headers if _unreadable(header))
        if skipped:
            sessions = "session" if skipped == 1 else "sessions"
            said = f"dsh: --continue: skipped {skipped} unreadable {sessions}"
            print(f"{said}: `dsh sessions list` says why", file=sys.stderr)
        try:
            return await harness.agents.load_stored(here.id)
        except DshError as error:
            if not damaged(error):
                raise
            others = started_in(headers, str(harness.workspace))
            raise await _go_on(error, here.id, others, harness, args) from error
    session_id = await find_session(service, wanted)
    try:
        return await harness.agents.load_stored(session_id)
    except DshError as error:
        if not damaged(error):
            raise
        other = f"`{_new_session(harness.workspace, args)}` starts a new session instead"
        # the command's own words: dsh sessions resume ID is run with --session ID
        said = getattr(args, "session_command", None) or "--session"
        raise _told(error, said, session_id, other, harness, args) from error


#: How many of the workspace's sessions before a damaged one ``--continue`` loads to find
#: one to suggest (each load reads the whole session: a few only).
_TRIED: Final = 3


async def _go_on(
    error: DshError,
    damaged_id: str,
    here: list[SessionHeader],
    harness: Harness,
    args: argparse.Namespace,
) -> DshError:
    """``error`` (the load of the session ``--continue`` took failed: it is damaged),
    its message followed by a line saying how to go on: ``--session`` with the last
    session of the workspace before it (``here``: its sessions, newest first) that loads
    (of the ``_TRIED`` before it: they may be damaged too), and ``dsh sessions delete``
    of it (``_told``). Not ``dsh sessions show`` first: it fails alike."""
    workspace = harness.workspace
    others = [header for header in here if header.id != damaged_id]
    tried = [header.id for header in others[:_TRIED]]
    found = await _loads(harness, tried)
    if found is not None:
        command = getattr(args, "command", None) or "run"
        words = _option("--session", found)
        before = command_line(workspace, args, command, *words, *_prompt_words(args))
        which = "the one before it" if found == tried[0] else "the last one before it that loads"
        other = f"`{before}` goes on with {which} here"
    else:
        damaged_too = ""
        if tried:
            many = (
                "one before it here is" if len(tried) == 1 else f"{len(tried)} before it here are"
            )
            damaged_too = f" (the {many} damaged too)"
        other = f"--session ID goes on with another{damaged_too} (`dsh sessions list` lists them)"
    return _told(error, "--continue", damaged_id, other, harness, args)


def _told(
    error: DshError,
    flag: str,
    damaged_id: str,
    other: str,
    harness: Harness,
    args: argparse.Namespace,
) -> DshError:
    """``error`` (the load of the session ``flag`` named failed: it is damaged), its
    message followed by a line saying how to go on (``other``) and, gently, ``dsh
    sessions delete`` of it: a newer dsh may have written it (an end reason this one
    does not know reads as damage). Of ``error``'s code and exit status."""
    delete = _dsh(args, harness.workspace, "sessions", "delete", "--", damaged_id)
    told = DshError(
        f"{error}\ndsh: {flag}: session {damaged_id} is damaged: {other}; if you no "
        f"longer need it (a newer dsh may read what this one cannot), `{delete}` deletes it"
    )
    told.code, told.exit_status = error.code, error.exit_status
    return told


def _new_session(workspace: Path, args: argparse.Namespace) -> str:
    """The command that starts a new session in place of the one ``args`` continued:
    its ``dsh run`` or ``dsh chat`` without ``--session``; ``dsh run PROMPT`` for ``dsh
    sessions resume`` (whose prompt may have been piped in: not repeated)."""
    command = getattr(args, "command", None)
    if command == "chat":
        return command_line(workspace, args, "chat")
    if command == "run":
        return command_line(workspace, args, "run", *_prompt_words(args))
    return command_line(workspace, args, "run", "PROMPT")


async def _loads(harness: Harness, session_ids: list[str]) -> str | None:
    """The first of ``session_ids`` whose stored session loads (``--session`` would take
    it); None if none does."""
    for session_id in session_ids:
        try:
            await harness.agents.load_stored(session_id)
        except DshError:  # damaged too, or gone meanwhile: not one to suggest
            continue
        return session_id
    return None


#: The longest prompt a command to paste repeats (a longer one, or one of several lines,
#: is ``PROMPT``: the line would bury the rest).
_LONGEST_PROMPT: Final = 200


def _prompt_words(args: argparse.Namespace) -> tuple[str, ...]:
    """The prompt of ``dsh run`` for a command to paste that runs it again: ``--`` and
    the prompt given, or ``PROMPT`` for the user to fill in when it was read from stdin
    (``-``), is long or has several lines, or would not be shown as given: a key in it
    hidden (``***``, or a control character escaped: ``_cli_keys.said``), or a backtick
    ending the hint's `...`; nothing for ``chat``."""
    from dsh._cli_keys import said

    if getattr(args, "command", None) != "run" or not isinstance(
        getattr(args, "prompt", None), str
    ):
        return ()
    prompt: str = args.prompt
    if getattr(args, "prompt_piped", False) or "\n" in prompt or len(prompt) > _LONGEST_PROMPT:
        return ("PROMPT",)
    if "`" in prompt or said(prompt, args) != prompt:
        return ("PROMPT",)
    return ("--", prompt)


def _unreadable(header: SessionHeader) -> bool:
    """Whether ``header`` is of a session the store cannot read (a newer dsh's, a
    damaged one), which may be this workspace's newest; not of a file that is no
    session (``foreign``: another program's ``.jsonl`` file in a store of
    ``directory: .``)."""
    return bool(header.error) and not header.foreign


def _none_here(headers: list[SessionHeader], workspace: Path, args: argparse.Namespace) -> str:
    """Why ``--continue`` has nothing to take here, and what would take what: the last
    session of a directory above (a project's root, seen from its subdirectory), else
    the store's last."""
    from dsh.persistence import last_above, shown_id

    said = f"--continue: no stored session last ran in {workspace}"
    above = last_above(headers, str(workspace))
    if above is not None:
        command = getattr(args, "command", None) or "run"
        there = command_line(
            Path(above.workspace), args, command, "--continue", *_prompt_words(args)
        )
        return (
            f"{said} (the last one of {above.workspace}, above it, is {shown_id(above.id)}: "
            f"`{there}` goes on with it there, --session {_shell_word(above.id)} here)"
        )
    readable = [header for header in headers if not header.error]
    if not readable:  # the store reads none of its files: nothing --session would take
        return f"{said} (the store holds no session it can read: `dsh sessions list` says why)"
    last = readable[0]
    return (
        f"{said} (the last one, {shown_id(last.id)}, is from {last.workspace}; --session "
        f"{_shell_word(last.id)} continues it here)"
    )


def chat_command(
    workspace: Path,
    args: argparse.Namespace,
    session_id: str | None,
    model: str | None = None,
    *,
    recorded: str | None = None,
) -> str:
    """The command that goes on with session ``session_id`` in a chat (None: a new one),
    to paste into a shell: ``dsh [-p NAME]... [-c FILE] [--cwd DIR] chat [-m MODEL]
    --session ID``, with the ``-p`` options ``args`` was given (``-p persistence`` may be
    what stores the session; DSH_LOAD_PLUGINS is the shell's, not repeated) and
    ``--cwd`` when ``workspace`` is not the current directory (``--session`` goes on in
    the directory it is run in). ``-m`` is ``model`` if given, else the ``-m`` of
    ``args`` unless the session records that model (``recorded``: a continued session
    keeps it), as ``given_model`` says. Each word is quoted as a shell needs it (an id
    may hold spaces and quotes: an agent's id begins it); see ``_shell_word`` for
    control characters. A value beginning with ``-`` is given as ``--config=-x.yml``,
    which the parser does not take for an option."""
    words = ["chat"]
    model = given_model(args, recorded) if model is None else model
    if model is not None:
        words += _option("-m", model, "--model")
    if session_id is not None:
        words += _option("--session", session_id)
    return _dsh(args, workspace, *words)


def command_line(
    workspace: Path, args: argparse.Namespace, *words: str, recorded: str | None = None
) -> str:
    """``dsh [-p NAME]... [-c FILE] [--cwd DIR] [-m MODEL] WORDS`` to paste: ``WORDS``
    run with the options ``args`` was given (as ``chat_command`` gives them, ``-m`` as
    ``given_model`` says), so that it takes the same store, config, workspace and model.
    Put ``--`` before the positional words: it is shown when one begins with ``-``."""
    model = given_model(args, recorded)
    return _dsh(args, workspace, *(_option("-m", model, "--model") if model else ()), *words)


def given_model(args: argparse.Namespace, recorded: str | None) -> str | None:
    """The ``-m`` of ``args``, for a command to paste: None when none was given or when
    it names the model the session records (``recorded``; ``-m tiny`` of dsh.yml, a
    ``provider:model``): a continued session keeps that one. A URL given with ``-m`` is
    not stored, so the command must give it again; what may be a key in it (a
    ``user:password@``, ``?api-key=...``) is ``***``, for the user to put back: a
    command shown is never a key's copy (``hidden_shorthand``)."""
    from dsh._shorthand import hidden_shorthand

    given = getattr(args, "model", None)
    if not isinstance(given, str) or not given or given == recorded:
        return None
    return hidden_shorthand(given)


def _dsh(args: argparse.Namespace, workspace: Path, *words: str) -> str:
    """``dsh WORDS`` to paste, run in ``workspace``, with the ``-p`` and ``-c`` options
    ``args`` was given, each word quoted (``_shell_word``). A ``--`` among ``words``
    stands before positional words (an id, a prompt): it is kept only when one of them
    begins with ``-``, which the parser would otherwise take for an option."""
    if "--" in words:
        cut = words.index("--")
        if not any(word.startswith("-") for word in words[cut + 1 :]):
            words = (*words[:cut], *words[cut + 1 :])
    line = ["dsh"]
    for plugin in getattr(args, "plugins", None) or ():
        line += _option("-p", plugin)
    if getattr(args, "config", None) is not None:
        line += _option("-c", str(args.config), "--config")
    try:
        here: Path | None = Path.cwd().resolve()
    except OSError:  # the current directory was removed
        here = None
    if here != workspace:
        line += _option("--cwd", str(workspace))
    return " ".join(map(_shell_word, [*line, *words]))


def _option(name: str, value: str, long: str | None = None) -> list[str]:
    """``name value``; ``LONG=value`` (``-pVALUE`` for a short option with no long name)
    when ``value`` begins with ``-``: alone, the parser would take it for an option."""
    if not value.startswith("-"):
        return [name, value]
    long = long or name
    return [f"{long}={value}" if long.startswith("--") else long + value]


#: A lone surrogate: a byte that is not UTF-8, as surrogateescape keeps it (U+DC80 to
#: U+DCFF), or another, which no text holds.
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _shell_word(word: str) -> str:
    """``word`` quoted for a shell (``shlex.quote``), or, when it holds a control
    character (an escape sequence, a bidi control, a line end; ``visible`` would show
    ``\\xNN``/``\\uNNNN`` text that pastes to another value), in bash's ``$'...'``,
    where those are escapes the shell turns back into the character: the line shows no
    raw control character and pastes to the same value. So is a word holding a byte
    that is not UTF-8 (a lone surrogate, as Python's surrogateescape keeps it): the
    byte is ``\\xNN`` there, and the pasted word the same bytes."""
    from dsh._visible import visible

    if visible(word) == word and "\n" not in word and not _SURROGATE.search(word):
        return shlex.quote(word)
    return "$'" + "".join(map(_escaped, word)) + "'"


def _escaped(char: str) -> str:
    """``char`` inside ``$'...'``: a control character as ``\\xNN`` (ASCII),
    ``\\uNNNN`` or, above U+FFFF, ``\\UNNNNNNNN`` (bash reads ``\\xNN`` as a byte, not
    as a character above 0x7f, and ``\\u`` takes four hex digits at most); a byte
    surrogateescape kept (U+DC80 to U+DCFF) as that byte, ``\\xNN``, and any other
    lone surrogate (no character of a path or an argument) as ``\\uNNNN``."""
    from dsh._visible import visible

    if char in "\\'":
        return "\\" + char
    if 0xDC80 <= ord(char) <= 0xDCFF:
        return f"\\x{ord(char) - 0xDC00:02x}"
    if char == "\n" or visible(char) != char or _SURROGATE.match(char):
        code = ord(char)
        if code < 0x80:
            return f"\\x{code:02x}"
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return char
