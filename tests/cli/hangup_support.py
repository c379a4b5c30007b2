"""Support for the tests of a terminal going away under `dsh chat` and `dsh run`
(test_chat_hangup.py, test_run_hangup.py), imported as ``hangup_support``: closing the
pseudo-terminal as a terminal emulator does, and reading the stored session after."""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pexpect
from terminal_reads import keyboard_signals_as_at_a_terminal


def dsh_in_terminal(
    *args: str,
    env: dict[str, str],
    cwd: Path,
    ignore_sighup: bool = False,
    ignore_sigquit: bool = False,
    stderr: Path | None = None,
) -> pexpect.spawn:
    """``dsh ARGS`` in a pseudo-terminal, as the session leader (the terminal's end
    sends it SIGHUP), through ``bash -c 'exec ...'``: ``ignore_sighup`` starts it with
    SIGHUP ignored (``trap '' HUP``), ``ignore_sigquit`` with SIGQUIT ignored (``trap ''
    QUIT``); ``stderr`` sends its stderr to that file instead of the terminal, to be
    read once the terminal has gone."""
    command = 'exec "$0" -m dsh.cli ' + " ".join(shlex.quote(arg) for arg in args)
    if stderr is not None:
        command += f" 2>{shlex.quote(str(stderr))}"
    if ignore_sighup:
        command = f"trap '' HUP; {command}"
    if ignore_sigquit:
        command = f"trap '' QUIT; {command}"
    child = pexpect.spawn(
        "bash",
        ["-c", command, sys.executable],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
        preexec_fn=keyboard_signals_as_at_a_terminal,
    )
    child.logfile_read = io.StringIO()
    return child


@contextmanager
def terminal_of_its_own(log: Path) -> Iterator[Path]:
    """A second pseudo-terminal, its path given, whose output is copied to ``log``: a
    stderr that is a terminal (dsh asks only when stderr is one) and outlives the first
    one's hangup, so what dsh writes after it can be read."""
    master, slave = os.openpty()

    def copy() -> None:
        with log.open("ab") as out:
            while True:
                try:
                    data = os.read(master, 4096)
                except OSError:  # every slave side closed
                    return
                if not data:
                    return
                out.write(data)
                out.flush()

    copying = threading.Thread(target=copy, daemon=True)
    copying.start()
    try:
        yield Path(os.ttyname(slave))
    finally:
        os.close(slave)
        copying.join(10)
        os.close(master)


def hang_up(child: pexpect.spawn) -> int:
    """Close the terminal (its master side) and return dsh's exit status once it has
    ended (-N: killed by signal N)."""
    child.ptyproc.fileobj.close()
    deadline = time.monotonic() + 60
    while child.ptyproc.isalive():
        if time.monotonic() > deadline:
            child.ptyproc.kill(signal.SIGKILL)
            raise AssertionError("dsh did not end after its terminal closed")
        time.sleep(0.05)
    status = child.ptyproc.exitstatus
    return -child.ptyproc.signalstatus if status is None else int(status)


def wait_for_text(path: Path, text: str, timeout: float = 60) -> str:
    """The file's text once it contains ``text``; fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while text not in (written := path.read_text() if path.exists() else ""):
        assert time.monotonic() < deadline, f"{text!r} never written to {path}:\n{written}"
        time.sleep(0.05)
    return written


def stored(env: dict[str, str]) -> list[dict[str, Any]]:
    """The events of the one stored session."""
    (log,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    _header, *events = log.read_text().splitlines()
    return [json.loads(line) for line in events]


def turn_ends(events: list[dict[str, Any]]) -> list[str]:
    """Each stored turn's reason for ending."""
    return [e["data"]["reason"] for e in events if e["type"] == "turn/end"]
