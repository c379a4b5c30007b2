"""The throwaway PostgreSQL server of these tests (``pg_server.py``): a test process that
is killed leaves its server running, and the next one stops and removes it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pg_server import _alive, require, sweep

pytestmark = pytest.mark.plugins("persistence")

STARTER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pg_server import PgServer
print(PgServer().start().root, flush=True)
time.sleep(120)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_the_server_of_a_killed_test_process_is_stopped_and_removed() -> None:
    require()
    here = str(Path(__file__).parent)
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, here], stdout=subprocess.PIPE, text=True
    )
    try:
        assert starter.stdout is not None
        root = Path(starter.stdout.readline().strip())
    finally:
        starter.send_signal(signal.SIGKILL)  # no teardown, no atexit
        starter.communicate(timeout=30)
    postmaster = int((root / "data" / "postmaster.pid").read_text().split()[0])
    assert _alive(postmaster), "the server should outlive the killed process"
    assert root in sweep()
    assert not root.exists()
    deadline = time.monotonic() + 10
    while _alive(postmaster):
        assert time.monotonic() < deadline, "the killed process's server still runs"
        time.sleep(0.05)
