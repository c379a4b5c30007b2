"""A child process sent SIGINT as it imports a given module, as a Ctrl-C at a terminal
while dsh starts: shared by test_cli_start_interrupt_import.py (the ``dsh`` command's
entry point) and test_cli_start_interrupt_module.py (``python -m dsh``).

The child runs ``STOP_HOOK`` first (the former as its ``-c`` code, the latter as its
``sitecustomize``): an import hook that stops it as it imports ``$STOP_AT``, says so and
waits reading a pipe no one writes to; ``interrupted_at`` then sends it SIGINT: no
timing, no race."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["STOP_HOOK", "interrupted_at"]

STOP_HOOK = """
import os
import signal
import sys

# as at a terminal, whatever the test process left the child (a disposition, a mask)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


class Stop:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("STOP_AT"):
            print("importing", name, flush=True)
            os.read(0, 1)  # till the signal: the test never writes
        return None


sys.meta_path.insert(0, Stop())
"""


def interrupted_at(
    stop_at: str, command: Sequence[str], env: Mapping[str, str], cwd: Path
) -> tuple[int, str]:
    """The exit status and stderr of ``command`` (whose child runs ``STOP_HOOK``) sent
    SIGINT as it imports ``stop_at``; it must print nothing on stdout."""
    child = subprocess.Popen(
        command,
        env={**env, "STOP_AT": stop_at},
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == f"importing {stop_at}\n"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert out == ""
    return child.returncode, err
