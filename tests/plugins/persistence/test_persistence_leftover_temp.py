"""Temp files that a kill left in a JSONL store are removed.

A new session file is published from a temp file ``.<name>.<pid>-<8 hex>.tmp`` holding
its header and first batch (the first prompt). Killed (``kill -9``) before the link, a
process left it for ever: ``list`` hides it, and ``delete`` of the session left it, so
the prompt of a deleted session stayed on disk. Now ``prepare()`` removes the temp files
whose process is not running on this host once they are ``LEFTOVER_AGE`` old (a younger
one may be a process of another container publishing), and ``delete`` those of its
session at once once it deleted the session file (with none, a young one may be the
first publish of another container's process, and is kept). A process still running
keeps its temp file, and only names of that exact pattern are touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_persistence_leftover_claims import made

from dsh_persistence import JsonlBackend, SessionInfo
from dsh_persistence._leftovers import LEFTOVER_AGE
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="whether a pid runs is not asked on Windows"),
]


@pytest.fixture(scope="module")
def dead() -> int:
    """The pid of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def temp(directory: Path, name: str, pid: int, *, old: bool = True) -> Path:
    path = directory / f".{name}.{pid}-0123abcd.tmp"
    content = (
        b""
        if name == "probe"
        else b'{"format":"dsh-session"}\n{"data":{"content":"my secret plan"}}\n'
    )
    made(path, content)
    if old:
        when = path.stat().st_mtime - LEFTOVER_AGE - 5
        os.utime(path, (when, when))
    return path


def names(directory: Path) -> list[str]:
    return sorted(entry.name for entry in directory.iterdir())


def test_prepare_removes_old_temp_files_of_processes_gone(tmp_path: Path, dead: int) -> None:
    left = temp(tmp_path, "s.jsonl", dead)
    probe = temp(tmp_path, "probe", dead)
    cut = temp(tmp_path, "x" * 200, dead)  # a long name, cut to 200 bytes
    kept = [
        temp(tmp_path, "t.jsonl", os.getpid()),  # this process: publishing now
        temp(tmp_path, "u.jsonl", os.getppid()),  # a live process
        temp(tmp_path, "v.jsonl", dead, old=False),  # maybe another container's
    ]
    other = tmp_path / f".w.jsonl.{dead}-0123.tmp"  # not the pattern: another program's
    other.write_text("x")
    kept.append(other)

    JsonlBackend(tmp_path).prepare()

    assert not left.exists() and not probe.exists() and not cut.exists()
    assert names(tmp_path) == sorted(path.name for path in kept)


def test_delete_removes_the_sessions_temp_files_of_processes_gone(
    tmp_path: Path, dead: int
) -> None:
    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    log.turn("one", calls=())
    backend.append(SessionInfo("s", 1.0), log.events, durable=True)
    temp(tmp_path, "s.jsonl", dead, old=False)
    temp(tmp_path, "gone.jsonl", dead)  # never stored: only its old temp file was left
    running = temp(tmp_path, "gone.jsonl", os.getppid(), old=False)
    others = [temp(tmp_path, "t.jsonl", dead, old=False), temp(tmp_path, "s.jsonl", os.getpid())]

    assert backend.delete("s") is True
    assert backend.delete("gone") is False
    assert names(tmp_path) == sorted(path.name for path in [running, *others])


def test_delete_of_a_session_not_stored_keeps_a_young_temp_file(tmp_path: Path, dead: int) -> None:
    """No session file to delete: a young temp file may be its first publish by a
    process of another container (whose pid this host does not see), which ``delete``
    must not take away before it is linked; only one ``LEFTOVER_AGE`` old goes."""
    young = temp(tmp_path, "s.jsonl", dead, old=False)
    assert JsonlBackend(tmp_path).delete("s") is False
    assert young.exists()
