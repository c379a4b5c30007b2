"""``python -m dsh.cli`` and ``python -m dsh`` interrupted with Ctrl-C while dsh is
imported say ``dsh: interrupted`` and exit 130, as the ``dsh`` command does
(test_cli_start_interrupt_import.py), not with Python's KeyboardInterrupt traceback.

An import hook in a ``sitecustomize`` on the child's path stops it as it imports
STOP_AT, says so and waits reading a pipe no one writes to; the test then sends it
SIGINT, as Ctrl-C at a terminal does: no timing, no race."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SITECUSTOMIZE = """
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


@pytest.mark.parametrize("module", ["dsh.cli", "dsh"])
@pytest.mark.parametrize(
    # within the dsh package (its first import), pluggy, the command line's modules
    "stop_at",
    ["dsh.errors", "pluggy", "dsh._cli_args", "dsh._cli_plugins"],
)
def test_ctrl_c_as_python_m_dsh_starts_says_interrupted(
    cli_env: dict[str, str], tmp_path: Path, module: str, stop_at: str
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = os.pathsep.join(p for p in (str(site), cli_env.get("PYTHONPATH")) if p)
    child = subprocess.Popen(
        [sys.executable, "-m", module, "version"],
        env={**cli_env, "STOP_AT": stop_at, "PYTHONPATH": path},
        cwd=tmp_path,
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
    assert (out, err) == ("", "dsh: interrupted\n")  # no traceback
    assert child.returncode == 130  # not -2: ended by the signal
