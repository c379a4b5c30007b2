"""Integration tests against a real local model server (llama.cpp, Qwen2.5-Coder 0.5B).

Opt-in, because the server is built and fetched on first use (minutes, cached after):
``nox -s realmodel`` sets ``DSH_REALMODEL=1``, and one server is started for the whole
run with ``python -m dsh.llm.llama``. ``DSH_REALMODEL_URL=http://127.0.0.1:PORT`` uses a
server that is already running instead (``python -m dsh.llm.llama start``).
Without either, the tests here are not collected.

The tests assert wire behaviour (chunks, tool-call assembly, usage, finish reasons,
error codes, aborts), never the quality of the small model's answers. Requests ask for
temperature 0, so the answers are repeatable.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from realmodel_support import CONTEXT, Peer, load_script

ENABLED = bool(os.environ.get("DSH_REALMODEL") or os.environ.get("DSH_REALMODEL_URL"))
if not ENABLED:  # not even collected (so the default test sessions never touch them)
    collect_ignore_glob = ["test_*.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A real model on 2 cores is slower than the suite's 120 s per test allows for the
    first test (it starts the server): these get 600 s."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.timeout(600))


def pytest_report_header() -> str | None:
    if ENABLED:
        return None
    return (
        "tests/realmodel: not collected; run `nox -s realmodel`, or set DSH_REALMODEL=1 "
        "(or DSH_REALMODEL_URL=http://127.0.0.1:PORT) to run them"
    )


@pytest.fixture(scope="session")
def peer() -> Iterator[Peer]:
    """One llama-server for the whole test session (or the one DSH_REALMODEL_URL names)."""
    given = os.environ.get("DSH_REALMODEL_URL")
    if given:
        yield Peer(given.rstrip("/").removesuffix("/v1"))
        return
    with load_script().start(context=CONTEXT) as server:
        yield Peer(server.url)
        if server.process.poll() is not None:  # pragma: no cover - a crash mid-run
            pytest.fail(f"llama-server died during the tests:\n{server.log_tail()}")
