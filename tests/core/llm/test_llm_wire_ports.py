"""The test helpers' own sockets: ``llm_wire.closed_port`` holds a bound port for the
run and closes it when the process exits. An unclosed socket found at the interpreter's
shutdown is reported after pytest's summary (``Exception ignored in: <socket.socket ...>``),
where no test fails on it, so this runs the helper in a process of its own."""

from __future__ import annotations

import gc
import socket
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import urlsplit

from llm_wire import WireServer

HERE = Path(__file__).parent

USE = f"""
import socket, sys
from urllib.parse import urlsplit
sys.path.insert(0, {str(HERE)!r})
import llm_wire

for _ in range(3):
    url = urlsplit(llm_wire.closed_port())
    try:
        socket.create_connection((url.hostname, url.port), timeout=5).close()
    except ConnectionRefusedError:
        pass
    else:
        sys.exit("a connection to " + url.netloc + " was accepted")
print(len(llm_wire._HELD))
"""


def test_closed_port_leaves_no_unclosed_socket_at_exit() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", USE],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "3\n", "")


def test_a_closed_port_refuses_connections_while_the_run_holds_it() -> None:
    from llm_wire import closed_port

    url = urlsplit(closed_port())
    assert url.hostname == "127.0.0.1" and url.port
    try:
        socket.create_connection((url.hostname, url.port), timeout=5).close()
    except ConnectionRefusedError:
        return
    raise AssertionError(f"a connection to {url.netloc} was accepted")


async def test_a_connection_accepted_as_the_server_stops_is_closed_with_it() -> None:
    """Off asyncio the server's loop is closed when it stops, so a connection accepted
    before its handler ran was never closed: its socket's ResourceWarning surfaced in
    whichever test the garbage collector ran in (a tests-trio failure on CI)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        for _ in range(20):
            async with WireServer([]) as server:
                url = urlsplit(server.url)
                client = socket.create_connection((url.hostname, url.port), timeout=5)
            client.close()
        gc.collect()
    assert [str(w.message) for w in seen if w.category is ResourceWarning] == []
