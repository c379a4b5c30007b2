"""The ``bash`` tool ends the command's whole session, not only its first process
group: GNU ``timeout`` and ``set -m`` job control move processes to groups of their
own in the same session, and those were left running on timeout, abort and return."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_tools_bash import LIMIT, gone, pids, running

from dsh.builtin_tools import _bash
from dsh.messages import ToolResult
from dsh.testing import ScriptedModel, scripted_harness, text, tool_calls

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc"), reason="the session's groups are found in /proc"
)

CallTool = Callable[..., Awaitable[ToolResult]]

# `timeout` runs its command in a new process group; inner.pid is that command's pid
UNDER_TIMEOUT = "timeout 300 sh -c 'echo $$ > inner.pid; exec sleep 30'"
# with job control on, a background job gets a process group of its own
JOB_CONTROL = "set -m; sh -c 'echo $$ > job.pid; exec sleep 30' &"


def parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def group(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[2])


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids a failing test must not leave running."""
    found: list[int] = []
    yield found
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


async def under_timeout(workspace: Path, leftovers: list[int]) -> list[int]:
    """The pids of `timeout` and of its command, once both run; in its own group."""
    [inner] = await pids(workspace, "inner.pid")
    processes = [parent(inner), inner]
    leftovers.extend(processes)
    assert group(inner) == processes[0]  # not the shell's group
    return processes


async def test_a_timeout_ends_the_groups_the_command_made(
    call_tool: CallTool, workspace: Path, leftovers: list[int]
) -> None:
    async with anyio.create_task_group() as tasks:
        found: list[int] = []

        async def watch() -> None:
            found.extend(await under_timeout(workspace, leftovers))

        tasks.start_soon(watch)
        result = await call_tool(
            "bash", command=f"echo start; {UNDER_TIMEOUT}; echo after", timeout=1
        )
    assert result.is_error and "it and every process it started were killed" in result.content
    assert result.content.endswith("Output before that:\nstart\n")
    assert await gone(*found)


async def test_the_groups_the_command_made_end_when_it_returns(
    call_tool: CallTool, workspace: Path, leftovers: list[int]
) -> None:
    both_written = "while [ ! -s job.pid ] || [ ! -s inner.pid ]; do sleep 0.05; done"
    command = f"{UNDER_TIMEOUT} & {JOB_CONTROL} {both_written}; echo started"
    result = await call_tool("bash", command=command)
    assert result.content == "started\n[exit code 0]"
    [job, inner] = await pids(workspace, "job.pid", "inner.pid")
    leftovers.extend([job, inner])
    assert await gone(job, inner)


async def test_an_abort_ends_the_groups_the_command_made(
    workspace: Path, leftovers: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bash, "KILL_GRACE", 0.3)
    command = f"{JOB_CONTROL} {UNDER_TIMEOUT}; echo after"
    model = ScriptedModel([tool_calls(("bash", {"command": command})), text("unused")])
    async with scripted_harness(model, load_entry_points=False, workspace=workspace) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        agent.send("go")
        processes = [*await under_timeout(workspace, leftovers), *await pids(workspace, "job.pid")]
        leftovers.extend(processes)
        assert all(running(p) for p in processes)
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert not any(running(p) for p in processes)  # gone before the turn ended
        ends = [e.data["reason"] for e in agent.session.events if e.type == "turn/end"]
    assert ends == ["aborted"]


@pytest.fixture
def odd_name(tmp_path: Path) -> Iterator[None]:
    """A process runs whose name (the first 15 bytes of it) is not UTF-8."""
    name = "é" * 9  # 18 bytes: cut at 15, in the middle of an "é"
    program = tmp_path / name
    shutil.copy("/bin/sleep", program)
    process = subprocess.Popen([program, "60"])
    try:
        yield
    finally:
        process.kill()
        process.wait()


@pytest.mark.usefixtures("odd_name")
async def test_a_process_name_that_is_not_utf8_does_not_break_bash(
    call_tool: CallTool, workspace: Path, leftovers: list[int]
) -> None:
    with anyio.fail_after(LIMIT):
        result = await call_tool("bash", command="echo hi")
    assert result.content == "hi\n[exit code 0]"
    with anyio.fail_after(LIMIT):
        result = await call_tool("bash", command=f"{JOB_CONTROL} {UNDER_TIMEOUT}", timeout=1)
    assert result.is_error and "it and every process it started were killed" in result.content
    processes = [*await pids(workspace, "job.pid", "inner.pid")]
    leftovers.extend(processes)
    assert await gone(*processes)


async def test_the_session_is_scanned_once_in_a_worker_thread_on_return(
    call_tool: CallTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.get_ident()
    scans: list[int] = []
    scan = _bash._session_groups

    def counted(sid: int) -> set[int] | None:
        scans.append(threading.get_ident())
        return scan(sid)

    monkeypatch.setattr(_bash, "_session_groups", counted)
    assert (await call_tool("bash", command="true")).content == "(no output)\n[exit code 0]"
    assert len(scans) == 1 and loop_thread not in scans


async def test_a_proc_of_another_pid_namespace_is_not_trusted(
    call_tool: CallTool, workspace: Path, leftovers: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # as after `unshare -p -f` without remounting /proc: /proc/self is not us, and
    # /proc lists none of our processes
    (workspace / "proc").mkdir()
    readlink, scandir = os.readlink, os.scandir

    def other_readlink(path: str) -> str:
        return "1" if path == "/proc/self" else readlink(path)

    def other_scandir(path: str) -> Any:
        return scandir(workspace / "proc" if path == "/proc" else path)

    monkeypatch.setattr(os, "readlink", other_readlink)
    monkeypatch.setattr(os, "scandir", other_scandir)
    result = await call_tool("bash", command="sleep 30 & echo $! > bg.pid; echo started")
    assert result.content == "started\n[exit code 0]"
    [job] = await pids(workspace, "bg.pid")
    leftovers.append(job)
    assert await gone(job)


def writable_last_pid() -> Path:
    """The file that chooses the next pid, or a skip where it cannot be written (a
    container may mount /proc/sys read-only, even for root)."""
    last_pid = Path("/proc/sys/kernel/ns_last_pid")
    try:
        last_pid.write_text(last_pid.read_text())
    except OSError as exc:
        pytest.skip(f"the next pid cannot be chosen here ({exc})")
    return last_pid


async def test_a_new_process_given_the_ended_sessions_number_is_left_alone(
    call_tool: CallTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the shell is reaped and its session empty, its pid may go to another
    program, which may make a session of its own with it (``setsid``)."""
    if os.geteuid() != 0:
        pytest.skip("only root may choose the next pid")
    last_pid = writable_last_pid()
    others: list[subprocess.Popen[bytes]] = []
    scan = _bash._session_groups

    def reusing(sid: int) -> set[int] | None:
        if not others:  # the pids wrapped round: another program gets the shell's
            last_pid.write_text(str(sid - 1))
            others.append(subprocess.Popen(["sleep", "60"], start_new_session=True))
        return scan(sid)

    monkeypatch.setattr(_bash, "_session_groups", reusing)
    try:
        result = await call_tool("bash", command="echo $$")
        [other] = others
        if result.content != f"{other.pid}\n[exit code 0]":
            pytest.skip("another process took the pid first")
        assert other.poll() is None
    finally:
        for other in others:
            other.kill()
            other.wait()
