"""Each start of the local model has its own stop signal: a start interrupted (Ctrl-C)
whose thread has not unwound yet stays stopped when a later start begins, and
interrupting one start never stops, or un-stops, another."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.llm import _llama_build, llama, local


class FakeServer:
    def stop(self) -> None:
        pass


async def test_a_later_start_does_not_unstop_an_interrupted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "build.log"
    log.write_text("")
    first_running, release_first = threading.Event(), threading.Event()
    outcomes: dict[str, str] = {}

    def step(name: str) -> None:
        try:
            _llama_build._run_logged(["true"], log, name)
            outcomes[name] = "ran"
        except _llama_build.ServerError as exc:
            outcomes[name] = str(exc)

    def start(**_: object) -> Any:
        if not first_running.is_set():  # the first start: slow to notice its interrupt
            first_running.set()
            release_first.wait(30)
            step("first")
            raise _llama_build.ServerError("interrupted")
        step("second")
        return FakeServer()

    monkeypatch.setattr(llama, "start", start)
    first = anyio.CancelScope()

    async def start_first() -> None:
        with first:
            await local._start_server()

    async with anyio.create_task_group() as tg:
        tg.start_soon(start_first)
        await anyio.to_thread.run_sync(first_running.wait, 30)
        first.cancel()
        # the cancelled start interrupted its work and waits for its thread to unwind
        # (shielded) while a second start begins and runs to its end
        await anyio.sleep(0.2)
        server = await local._start_server()
        assert isinstance(server, FakeServer)
        release_first.set()
    assert first.cancelled_caught
    assert outcomes == {"second": "ran", "first": "interrupted"}


def test_interrupting_one_work_leaves_another_running(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("")
    stopped, going = _llama_build.Work(), _llama_build.Work()
    stopped.interrupt()
    with _llama_build.working(going):
        _llama_build._run_logged(["true"], log, "compiling")
        with (
            _llama_build.working(stopped),
            pytest.raises(_llama_build.ServerError, match="interrupted"),
        ):
            _llama_build._run_logged(["true"], log, "compiling")
        _llama_build._run_logged(["true"], log, "linking")  # the outer work again
    going.interrupt()
    with (
        _llama_build.working(going),
        pytest.raises(_llama_build.ServerError, match="interrupted"),
    ):
        _llama_build._run_logged(["true"], log, "linking")
