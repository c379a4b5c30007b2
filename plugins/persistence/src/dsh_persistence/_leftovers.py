"""The leftovers of a kill in a session directory: temp files of a ``publish`` cut short,
lock files of claims and turns no process holds. Removed by name and content, so that
another program's files of like names (a store in the workspace: ``directory: .``) are
never touched: dsh's own are this user's and private (made 0600), so any other's is
kept, however named."""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from dsh_persistence._files import (
    LOCKS,
    SUFFIX,
    TEMP_NAME,
    leads_to,
    open_regular,
    read_at,
    try_lock_file,
)

__all__ = ["HEADER_START", "LEFTOVER_AGE", "remove_leftovers", "remove_probe", "remove_unheld"]

#: The temp files of ``publish`` and ``probe_directory``: ``.<name>.<pid>-<8 hex>.tmp``,
#: ``name`` a session file's name (cut to ``TEMP_NAME``: ``_temp_name``) or ``probe``.
_TEMP = re.compile(r"\.(?P<name>[A-Za-z0-9_%.-]{1,200})\.(?P<pid>[1-9][0-9]{0,9})-[0-9a-f]{8}\.tmp")
_ENCODED = re.compile(r"[A-Za-z0-9_%-]+")
#: How a session file starts (``_header.header_line``): a temp file of ``publish`` holds
#: it first (a probe's holds nothing). Another program's file of a name like a temp
#: file's, that does not start so, is not touched.
HEADER_START = b'{"format":"dsh-session"'
#: The lock files of a session: ``.<session file name>.claim``, of the claim of a session
#: not stored yet (``_jsonl_locks.claim_path``), and ``.<session file name>.lock``, the
#: turn of the writers that hold no claim (``_jsonl_locks.turn_path``), each removed by
#: its holder as it lets go, and left by a kill.
#:
#: Either is removed only while held here (``remove_unheld``), and every taker locks
#: the file it opened and then checks that its name still leads to it
#: (``_claims.hold_lock_file``), as it does for a holder's own removal: a process that
#: holds it is never robbed (the lock is not ours to take), and one that opened it just
#: before it was removed (or waits for its lock: a turn is waited for) finds, once it has
#: the lock, that the name leads nowhere, and takes a new file; a claim (that one does
#: not wait) that tries the lock while held here finds the same once the file is
#: removed. Holding it here does not stop a turn being taken, only delays it. A claim
#: that tries it in the instant between this lock and the removal finds it held: the
#: age below does not prevent that (a kill's leftover is old, and a delete removes a
#: turn at once), so such a claim tries the lock again a few times, for a few
#: milliseconds, while the name still leads to the file (``_claims.BUSY_PAUSES``), and
#: meets the removal; for seconds if it made the file itself an instant before (a claim
#: racing a delete's cleanup: ``_claims.MADE_PATIENCE``), as no claim holds that one.
#: (The claims directory of ``_claims.ClaimFiles``, SQLite's: the same.)
_LOCK_FILE = re.compile(r"\.(?P<name>[A-Za-z0-9_%-]{1,240}\.jsonl)\.(?:claim|lock)")
#: A temp file whose process is gone, or a lock file no process holds, is left over once
#: it is this old (seconds): a younger temp file may be the publish of a process that
#: this host does not see (another container sharing the directory), whose pid is no
#: live process here; a younger lock file may be a claim being taken, whose lock is
#: better not held here in the meantime (its taker would have to try again).
LEFTOVER_AGE = 600.0


def remove_leftovers(directory: Path, *, of: str | None = None, age: float = LEFTOVER_AGE) -> None:
    """Remove the files a kill left in ``directory`` (of the session file ``of`` only,
    if given), not changed for ``age`` seconds: the temp files named exactly as
    ``publish`` and ``probe_directory`` name them (``_temp_name``), empty or starting as
    a session file does (``HEADER_START``; a probe's: empty), whose process is not
    running on this host (a ``publish`` cut short leaves one holding the session's
    header and first batch: its prompt), and the empty lock files that no process holds
    (``remove_unheld``) of claims of sessions not stored yet and of the turns of appends
    without a claim (``_LOCK_FILE``); each only if ``_private`` (made by this user, 0600,
    as dsh makes them). A file of such a name holding anything else, or another user's,
    or one others may read (an empty lock of ``lockfile(1)``, ``set -C``, py-filelock:
    0644) is another program's (a store in the workspace, ``directory: .``, shares it),
    and kept. Best effort: a file that cannot be checked or removed is left."""
    prefix = None if of is None else of[:TEMP_NAME]
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        lock = _LOCK_FILE.fullmatch(entry.name)
        if lock is not None:
            if of is None or lock["name"] == of:
                remove_unheld(Path(entry.path), age=age)
            continue
        found = _TEMP.fullmatch(entry.name)
        if found is None or not _temp_name(found["name"]):
            continue
        if prefix is None or found["name"] == prefix:
            _remove_temp(entry, found, now=now, age=age)


def remove_probe(entry: os.DirEntry[str], *, age: float = LEFTOVER_AGE) -> None:
    """Remove ``entry`` if it is a temp file of ``probe_directory`` that a kill left
    (``remove_leftovers`` says which: empty, private, its process gone, ``age`` old), in
    a directory of other files than session files (``_claims.ClaimFiles``'). Best
    effort: nothing is raised."""
    found = _TEMP.fullmatch(entry.name)
    if found is not None and found["name"] == "probe":
        _remove_temp(entry, found, now=time.time(), age=age)


def _remove_temp(entry: os.DirEntry[str], found: re.Match[str], *, now: float, age: float) -> None:
    """Remove the temp file ``entry`` (named as ``_TEMP`` ``found``) if its process is
    not running, it is ``age`` old, ``_private`` and holds what dsh's would."""
    if _running(int(found["pid"])):
        return
    check = _empty if found["name"] == "probe" else _holds_a_header
    with suppress(OSError):
        if entry.is_file(follow_symlinks=False) and (
            now - entry.stat(follow_symlinks=False).st_mtime >= age
        ):
            _remove_if(Path(entry.path), lambda fd: _private(fd) and check(fd))


def _temp_name(name: str) -> bool:
    """Whether ``name`` is the name ``publish`` (a session file's, cut to ``TEMP_NAME``)
    or ``probe_directory`` (``probe``) puts in a temp file's."""
    if name == "probe":
        return True
    stem, dot, rest = name.partition(".")
    if _ENCODED.fullmatch(stem) is None:
        return False
    if len(name) < TEMP_NAME:
        return dot + rest == SUFFIX
    return len(name) == TEMP_NAME and SUFFIX.startswith(dot + rest)


def _holds_a_header(fd: int) -> bool:
    """Whether the file ``fd`` is empty or starts as a session file does (or as much of
    that start as it holds: a ``publish`` cut short)."""
    return HEADER_START.startswith(read_at(fd, len(HEADER_START), 0))


def _empty(fd: int) -> bool:
    return os.fstat(fd).st_size == 0


def _private(fd: int) -> bool:
    """Whether the file ``fd`` may be dsh's own: this user's, and private (no access for
    group or others): dsh makes its temp and lock files 0600 (``publish``,
    ``probe_directory``, ``_claims.hold_lock_file``), which a umask only narrows. Where
    that cannot be told (no ``geteuid``: Windows), False: kept."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:  # pragma: no cover - Windows
        return False
    opened = os.fstat(fd)
    return opened.st_uid == geteuid() and stat.S_IMODE(opened.st_mode) & 0o077 == 0


def _remove_if(path: Path, check: Callable[[int], bool]) -> None:
    """Remove ``path`` (a regular file, not a link) if ``check`` of it, opened, says so
    and its name still leads to it. Best effort: nothing is raised."""
    try:
        fd = open_regular(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:  # gone, a link, not a regular file: not ours
        return
    try:
        with suppress(OSError):
            if check(fd) and leads_to(path, fd):
                os.unlink(path)
    finally:
        os.close(fd)


def remove_unheld(path: Path, *, age: float = 0.0) -> None:
    """Remove the lock file ``path`` (a regular file, not a link) if no process holds
    its lock, it is empty (dsh's hold nothing: one that holds something is another
    program's), ``_private`` (dsh makes them 0600: an empty one others may read is
    another program's) and it has not changed for ``age`` seconds, holding its lock while it is
    removed: a claim or a turn taken meanwhile on the file removed finds (``leads_to``)
    that the name leads elsewhere and takes it anew (``_LOCK_FILE`` says why that is
    safe; the lock files of ``_claims.ClaimFiles``, SQLite's, are taken the same way).
    Best effort: nothing is raised."""
    if not LOCKS:  # no locks to tell a held one by (and none are made)
        return

    def unheld(fd: int) -> bool:
        return (
            time.time() - os.fstat(fd).st_mtime >= age  # a young one is not even locked
            and _private(fd)  # another program's is not even locked
            and try_lock_file(fd)
            and _empty(fd)  # checked on the file held: another program's is kept
        )

    _remove_if(path, unheld)  # and not removed (and made anew) since it was opened


def _running(pid: int) -> bool:
    """Whether process ``pid`` may be running here (True when that cannot be told)."""
    if os.name == "nt" or pid == os.getpid():  # Windows: os.kill would end the process
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's (EPERM), or a pid past any
        return True
    return True
