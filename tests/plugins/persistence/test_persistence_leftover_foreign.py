"""The cleanup of leftovers touches dsh's own files only, never another program's.

``prepare()`` (every harness start that starts agents) removes the temp files and lock
files a kill left in the session directory (test_persistence_leftover_temp.py,
test_persistence_leftover_claims.py). It went by their names alone: with ``directory:
.`` (the workspace, as documented) a harness start removed another program's
``.notes.jsonl.lock`` holding its state, ``.events.jsonl.claim``, or
``.report.csv.4242-0123abcd.tmp``, once they were ten minutes old and unlocked. Now a
lock file goes only when empty (dsh's are: the lock is the claim, the file holds
nothing), and a temp file only when named as dsh's ``publish`` and ``probe_directory``
name theirs (an encoded session file name, cut to 200 bytes, or ``probe``) and empty or
starting with a session file's header. An empty lock file (``lockfile(1)``, ``set -C``,
py-filelock's ``FileLock``) was still removed: now either goes only when this user's and
private (0600, as dsh makes them). And a probe's temp file a kill left in SQLite's
claims directory is now removed (it never was).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_persistence_leftover_claims import age, made, names

from dsh.testing import ScriptedModel, scripted_harness, text
from dsh_persistence import JsonlBackend, PersistencePlugin, PersistenceSettings, SessionInfo
from dsh_persistence._claims import ClaimFiles
from dsh_persistence._header import header_line
from dsh_persistence._leftovers import HEADER_START

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]

HEADER = b'{"format":"dsh-session","version":1,"id":"s"}\n{"data":{"content":"a prompt"}}\n'


@pytest.fixture(scope="module")
def dead() -> int:
    """The pid of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def old_file(path: Path, content: bytes) -> Path:
    age(made(path, content))  # as dsh makes them (0600): kept for their content alone
    return path


def test_the_header_start_checked_is_the_one_dsh_writes() -> None:
    assert header_line(SessionInfo("s", 1.0)).startswith(HEADER_START)
    assert HEADER.startswith(HEADER_START)


def test_lock_files_with_content_are_another_programs_and_kept(tmp_path: Path) -> None:
    kept = [
        old_file(tmp_path / ".notes.jsonl.lock", b"pid=4242 owner=other-tool\nstate\n"),
        old_file(tmp_path / ".events.jsonl.claim", b"x"),
    ]
    gone = [
        old_file(tmp_path / ".s.jsonl.lock", b""),  # dsh's own: empty
        old_file(tmp_path / ".t.jsonl.claim", b""),
    ]

    JsonlBackend(tmp_path).prepare()

    assert names(tmp_path) == sorted(path.name for path in kept)
    assert all(not path.exists() for path in gone)


def test_temp_files_not_named_or_filled_as_dshs_are_kept(tmp_path: Path, dead: int) -> None:
    made: list[Path] = []

    def temp(name: str, content: bytes) -> Path:  # each its own random part
        made.append(old_file(tmp_path / f".{name}.{dead}-{len(made):08x}.tmp", content))
        return made[-1]

    kept = [
        temp("report.csv", b"another program's data\n"),
        temp("report.csv", b""),  # not a name dsh gives: even empty
        temp("notes", b""),
        temp("a.b.jsonl", b""),  # a dot is %2E in dsh's names
        temp("x" * 150, b""),  # neither a session file's name nor one cut to 200
        temp("s.jsonl", b"another program's data\n"),  # dsh's name, not its content
        temp("probe", b"not a probe\n"),
        temp("y" * 200, b"[1, 2, 3]\n"),
    ]
    gone = [
        temp("t.jsonl", HEADER),
        temp("u.jsonl", b""),  # killed before its first write
        temp("v.jsonl", HEADER_START[:9]),  # killed mid-write
        temp("probe", b""),
        temp("z" * 200, HEADER),  # a long name cut to 200
        temp("w" * 196 + ".jso", HEADER),  # cut inside ".jsonl"
        temp("%2F%C3%A9" + "_" * 185 + ".jsonl", HEADER),  # 200 long, uncut
    ]

    JsonlBackend(tmp_path).prepare()

    assert names(tmp_path) == sorted(path.name for path in kept)
    assert all(not path.exists() for path in gone)


def test_a_delete_keeps_another_programs_file_of_the_sessions_name(
    tmp_path: Path, dead: int
) -> None:
    lock = old_file(tmp_path / ".s.jsonl.lock", b"state\n")
    temp = old_file(tmp_path / f".s.jsonl.{dead}-0123abcd.tmp", b"data\n")
    assert JsonlBackend(tmp_path).delete("s") is False
    assert lock.exists() and temp.exists()


def test_sqlite_claims_directory_keeps_lock_files_with_content(tmp_path: Path) -> None:
    claims = ClaimFiles(tmp_path / "sessions.sqlite3-claims")
    claims.directory.mkdir()
    full = old_file(claims.path("s"), b"someone's\n")
    empty = old_file(claims.path("t", "turn"), b"")
    claims.remove_leftovers()
    claims.remove_leftovers("s", age=0)
    assert full.exists() and not empty.exists()


async def start_harness_in(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A harness start that starts agents, in ``workspace`` with ``directory: .``."""
    monkeypatch.chdir(workspace)
    plugin = PersistencePlugin(PersistenceSettings(backend="jsonl", directory=Path(".")))
    try:
        async with scripted_harness(
            ScriptedModel([text("ok")]),
            plugins=[("persistence", plugin)],
            load_entry_points=False,
            workspace=workspace,
        ):
            pass
    finally:
        plugin.close()


async def test_a_harness_start_in_the_workspace_keeps_other_programs_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dead: int
) -> None:
    """The reviewer's case: ``directory: .`` and a harness that starts agents."""
    others = [
        old_file(tmp_path / ".notes.jsonl.lock", b"pid=4242 owner=other-tool\n"),
        old_file(tmp_path / ".events.jsonl.claim", b"another program's data\n"),
        old_file(tmp_path / ".report.csv.4242-0123abcd.tmp", b"another program's data\n"),
        old_file(tmp_path / f".notes.jsonl.{dead}-0123abcd.tmp", b"a,b\n"),
    ]
    await start_harness_in(tmp_path, monkeypatch)
    assert [path for path in others if not path.exists()] == []


def foreign(path: Path, content: bytes = b"", mode: int = 0o644) -> Path:
    """``path`` made as another program makes its files (umask 022: 0644), ten minutes
    old at least."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    os.close(fd)
    os.chmod(path, mode)  # whatever this process's umask
    if content:
        path.write_bytes(content)
    age(path)
    return path


def test_empty_files_that_others_may_read_are_another_programs_and_kept(
    tmp_path: Path, dead: int
) -> None:
    """The re-review's case: locks that work by the file existing are empty (``lockfile(1)``,
    ``set -C; : > f``, py-filelock's ``FileLock`` leaves one), and were removed as
    dsh's own. dsh makes its files 0600: one group or others may read is not its."""
    kept = [
        foreign(tmp_path / ".notes.jsonl.lock"),
        foreign(tmp_path / ".events.jsonl.claim", mode=0o640),
        foreign(tmp_path / f".s.jsonl.{dead}-0123abcd.tmp"),
        foreign(tmp_path / f".probe.{dead}-0123abcd.tmp", mode=0o604),
        foreign(tmp_path / f".t.jsonl.{dead}-0123abcd.tmp", HEADER),
    ]
    gone = [
        old_file(tmp_path / ".s.jsonl.lock", b""),
        old_file(tmp_path / ".t.jsonl.claim", b""),
        old_file(tmp_path / f".u.jsonl.{dead}-0123abcd.tmp", HEADER),
        old_file(tmp_path / f".probe.{dead}-4567abcd.tmp", b""),
    ]

    JsonlBackend(tmp_path).prepare()

    assert names(tmp_path) == sorted(path.name for path in kept)
    assert all(not path.exists() for path in gone)


def test_the_files_dsh_makes_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the check above relies on: dsh makes its temp and lock files 0600 (a umask
    only narrows that), so a kill's leftover of its own is always removed."""
    from dsh_persistence import _claims, _files

    modes: list[int] = []
    real_open = os.open

    def recording_open(path: str, flags: int, mode: int = 0o777) -> int:
        if flags & os.O_CREAT:
            modes.append(mode)
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", recording_open)
    _files.probe_directory(tmp_path)
    _files.publish(tmp_path / "s.jsonl", HEADER.splitlines(), fsync=False)
    claim = tmp_path / ".t.jsonl.claim"
    held = _claims.hold_lock_file(claim, wait=False)
    assert held is not None
    _claims.let_go(claim, held)
    assert modes == [0o600, 0o600, 0o600]


def test_a_file_of_another_user_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A root-run harness in a shared directory keeps another user's 0600 empty lock."""
    lock = old_file(tmp_path / ".s.jsonl.lock", b"")
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(lock).st_uid + 1)
    JsonlBackend(tmp_path).prepare()
    assert lock.exists()


async def test_a_harness_start_in_the_workspace_keeps_an_empty_foreign_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reviewer's repro: ``directory: .``, a job's ``.notes.jsonl.lock`` (empty,
    0644, an hour old, no flock) beside its ``notes.jsonl``; dsh's own killed claim too."""
    theirs = foreign(tmp_path / ".notes.jsonl.lock")  # as `umask 022; set -C; : > f` makes
    (tmp_path / "notes.jsonl").write_text('{"a":1}\n')
    ours = old_file(tmp_path / ".x.jsonl.claim", b"")
    await start_harness_in(tmp_path, monkeypatch)
    assert theirs.exists() and not ours.exists()


def test_sqlite_claims_directory_removes_a_killed_probe(tmp_path: Path, dead: int) -> None:
    """``check_claims`` probes the claims directory with ``probe_directory``: a kill
    between its make and removal left ``.probe.<pid>-<hex>.tmp`` there for ever."""
    claims = ClaimFiles(tmp_path / "sessions.sqlite3-claims")
    claims.directory.mkdir()
    probe = old_file(claims.directory / f".probe.{dead}-0123abcd.tmp", b"")
    live = old_file(claims.directory / f".probe.{os.getppid()}-0123abcd.tmp", b"")
    young = made(claims.directory / f".probe.{dead}-4567abcd.tmp")
    kept = [
        live,
        young,
        old_file(claims.directory / f".probe.{dead}-89abcdef.tmp", b"x"),
        foreign(claims.directory / f".probe.{dead}-0000abcd.tmp"),
        old_file(claims.directory / f".s.jsonl.{dead}-0123abcd.tmp", b""),  # not a probe
    ]
    claims.remove_leftovers("s", age=0)  # a session's: its lock files only
    assert probe.exists()
    claims.remove_leftovers()
    assert not probe.exists()
    assert names(claims.directory) == sorted(path.name for path in kept)
