"""Ctrl-C while the local model starts, at the edges: a cancellation that lands before
the worker thread has begun the start (anyio then never calls it) ends at once instead
of waiting a minute for a thread that never ran; a start interrupted once its model is
cached (or while llama-server gets ready) launches no server, or stops it."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.llm import _llama_build, llama, local


async def test_a_cancellation_before_the_thread_begins_does_not_wait_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker thread never runs the start (the cancellation came first): before, the
    shielded wait for it to unwind took its full 60 s."""
    called: list[object] = []
    monkeypatch.setattr(llama, "start", lambda **_: called.append(1))
    real = anyio.to_thread.run_sync
    calls: list[object] = []

    async def run_sync(func: Any, *args: Any, **options: Any) -> Any:
        calls.append(func)
        if len(calls) == 1:  # the start: cancelled before a worker took it up
            await anyio.sleep_forever()
        return await real(func, *args, **options)

    monkeypatch.setattr(anyio.to_thread, "run_sync", run_sync)
    began = time.monotonic()
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(local._start_server)
            await anyio.sleep(0.05)
            scope.cancel()
    assert scope.cancelled_caught
    assert time.monotonic() - began < 30  # the bug: 60 s
    # had the worker got to it after all, it would not begin the start
    if len(calls) > 1:
        assert called == []


def test_a_start_interrupted_once_its_model_is_cached_launches_no_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    work = _llama_build.Work()
    launched: list[object] = []

    def ensure_model() -> Path:  # the model was cached; Ctrl-C came meanwhile
        work.interrupt()
        return tmp_path / "model.gguf"

    monkeypatch.setattr(llama, "ensure_built", lambda: tmp_path / "llama-server")
    monkeypatch.setattr(llama, "ensure_model", ensure_model)
    monkeypatch.setattr(llama.subprocess, "Popen", lambda *a, **k: launched.append(a))
    with (
        _llama_build.working(work),
        pytest.raises(_llama_build.ServerError, match="interrupted"),
    ):
        llama.start(log=tmp_path / "server.log")
    assert launched == []


def test_a_start_interrupted_while_the_server_gets_ready_stops_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Before, the wait for the server to be ready went on (up to its 120 s timeout)."""
    work = _llama_build.Work()
    launched: list[subprocess.Popen[bytes]] = []
    real = subprocess.Popen

    def popen(_: list[str], **options: Any) -> subprocess.Popen[bytes]:
        options.pop("preexec_fn", None)  # a server that never gets ready
        process = real([sys.executable, "-c", "import time; time.sleep(120)"], **options)
        launched.append(process)
        threading.Timer(0.3, work.interrupt).start()
        return process

    monkeypatch.setattr(llama, "ensure_built", lambda: tmp_path / "llama-server")
    monkeypatch.setattr(llama, "ensure_model", lambda: tmp_path / "model.gguf")
    monkeypatch.setattr(llama.subprocess, "Popen", popen)
    began = time.monotonic()
    with (
        _llama_build.working(work),
        pytest.raises(_llama_build.ServerError, match="interrupted"),
    ):
        llama.start(log=tmp_path / "server.log", timeout=60)
    assert time.monotonic() - began < 30
    assert [process.poll() is not None for process in launched] == [True]
