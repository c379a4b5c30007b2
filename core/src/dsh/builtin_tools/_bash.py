"""The ``bash`` tool: run a shell command in the workspace, in its own session.

The command runs in a new session (``start_new_session=True``), so it and everything
it starts belong to that session, in its first process group or in groups its
processes made (GNU ``timeout``, ``set -m`` job control). The session is ended as a
whole, every group of it, with SIGTERM and, after a short grace, SIGKILL: when the
command returns (background jobs it left behind do not outlive the call), when it
times out, and when the step is aborted (the loop cancels the step while the tool
awaits). Nothing the command started is left running, unless it moved itself to
another session (``setsid``).

POSIX only. The session's groups are found in ``/proc`` (Linux); without it (macOS)
only the command's own group is ended, and a process that moved to another group of
the session is left running.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Collection
from pathlib import Path
from typing import Final

import anyio
import anyio.to_thread
from anyio.abc import Process
from pydantic import Field

from dsh.builtin_tools._bash_result import NO_OUTPUT, status
from dsh.builtin_tools._output_cap import HeadTail
from dsh.tools import ToolContext, ToolError, tool

__all__ = [
    "DEFAULT_TIMEOUT",
    "KILL_GRACE",
    "MAX_OUTPUT_BYTES",
    "MAX_TIMEOUT",
    "NO_OUTPUT",
    "bash",
    "command_environment",
]

DEFAULT_TIMEOUT: Final = 120
MAX_TIMEOUT: Final = 600
#: Output beyond this is cut from the middle: the first and last halves are kept.
MAX_OUTPUT_BYTES: Final = 30_000
#: Seconds between SIGTERM and SIGKILL.
KILL_GRACE: Final = 2.0
#: Seconds to wait for the output pipe to close once the session is ended.
_DRAIN: Final = 1.0
#: Seconds between the first checks whether the session has ended, and at most.
_FIRST_POLL: Final = 0.02
_LAST_POLL: Final = 0.2


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to the group; False when no process of it is left."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _session_groups(sid: int) -> set[int] | None:
    """The process groups of the running processes of session ``sid``, or None where
    there is no ``/proc`` of our own to read (macOS; a ``/proc`` of another PID
    namespace, as after ``unshare -p -f`` without remounting it). Zombies do not count:
    where PID 1 does not reap orphans (some containers) they stay forever, and they hold
    nothing. Never raises: on anything unexpected, None (the caller then falls back to
    the command's own group). Slow with many processes: call it in a worker thread."""
    try:
        if int(os.readlink("/proc/self")) != os.getpid():
            return None
        return _scan_proc(str(sid).encode())
    except Exception:  # a failed scan must not fail the command
        return None


def _scan_proc(session: bytes) -> set[int]:
    groups = set()
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(os.path.join(entry.path, "stat"), "rb") as file:
                    stat = file.read()
                # "pid (comm) state ppid pgrp session ...": comm (any bytes, not
                # UTF-8 necessarily) may hold spaces and ')'
                state, _, group, member_of = stat[stat.rindex(b")") + 2 :].split(maxsplit=4)[:4]
                if member_of == session and state not in (b"Z", b"X"):
                    groups.add(int(group))
            except (OSError, ValueError):
                continue
    return groups


def _signal_session(sid: int, signum: int, reaped: bool) -> bool:
    """Send ``signum`` (0: none) to every process group of session ``sid`` (the
    command's own group and those its processes moved to: ``timeout``, ``set -m``);
    whether a process of it still runs. Without a ``/proc`` of our own, to the
    command's own group only. ``reaped``: whether the shell (pid ``sid``) was reaped.
    Blocking (it reads ``/proc``): run it in a worker thread."""
    groups = _session_groups(sid)
    if reaped and _pid_taken(sid):
        # The kernel gives no new process a number still in use as a session or group
        # id: a process numbered ``sid`` now (checked after the scan, which may have
        # seen it) is another program's, which may have made a session of its own
        # (``setsid``): ours has ended. Not to be signalled.
        return False
    if groups is None:
        return _signal_group(sid, signum)
    for pgid in sorted(groups):
        _signal_group(pgid, signum)
    return bool(groups)


def _pid_taken(pid: int) -> bool:
    try:
        os.getsid(pid)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists
        return True
    return True


async def _signal_session_async(process: Process, signum: int) -> bool:
    reaped = process.returncode is not None
    return await anyio.to_thread.run_sync(_signal_session, process.pid, signum, reaped)


async def _session_ended(process: Process, signum: int = 0) -> None:
    """Return once no process of the session runs (bound it with a cancel scope),
    sending ``signum`` again each time: a process may fork into a new group meanwhile."""
    # nothing signals the end of processes that are not our children: poll, less and
    # less often (a scan of /proc takes a while with thousands of processes)
    pause = _FIRST_POLL
    while await _signal_session_async(process, signum):
        await anyio.sleep(pause)
        pause = min(pause * 2, _LAST_POLL)


async def _end_session(process: Process) -> None:
    """SIGTERM every process group of the command's session, SIGKILL them if anything
    still runs after the grace, and reap the shell. Returns once the session is gone
    (SIGKILL takes a moment too). On a normal return with nothing left, one scan. The
    session's id is the shell's pid (the leader of the session and of its first
    group)."""
    if await _signal_session_async(process, signal.SIGTERM):
        with anyio.move_on_after(KILL_GRACE) as grace:
            await process.wait()
            await _session_ended(process)
        if grace.cancelled_caught and await _signal_session_async(process, signal.SIGKILL):
            with anyio.move_on_after(_DRAIN):
                await _session_ended(process, signal.SIGKILL)
    await process.wait()


def hidden_variables(agent: object) -> frozenset[str]:
    """The environment variables commands run without: the harness's model API key
    variables and its plugins' secret variables (``Harness.hidden_variables``); with no
    harness, the built-in providers' key variables."""
    harness = getattr(agent, "harness", None)
    if harness is not None:
        names: frozenset[str] = harness.hidden_variables()
        return names
    from dsh._secrets import key_variables

    return frozenset(key_variables(None))


def command_environment(cwd: Path, hidden: Collection[str] = ()) -> dict[str, str]:
    """The environment a command runs with: dsh's own less the ``hidden`` variables,
    with ``PWD`` the real path of ``cwd`` and no ``OLDPWD`` nor ``CDPATH``. bash takes an inherited
    ``PWD`` naming its directory for its logical one, so one inherited from the shell
    that started dsh (a workspace entered through a symlink) would make ``cd ..`` go
    elsewhere than to the parent of the directory it runs in, and an inherited
    ``OLDPWD`` would make ``cd -`` go to the user's previous directory, and a
    ``CDPATH`` ``cd secrets`` to another directory than ``./secrets``: places a
    permission check reading the command from its real directory does not see."""
    env = {name: value for name, value in os.environ.items() if name not in hidden}
    env.pop("OLDPWD", None)
    env.pop("CDPATH", None)
    env["PWD"] = os.path.realpath(cwd)
    return env


async def run_command(
    command: str,
    cwd: Path,
    time_limit: float,
    hidden: Collection[str] = (),
    secrets: Collection[str] = (),
) -> tuple[str, int | None, bool]:
    """Run ``command`` with bash (or ``/bin/sh``) in ``cwd`` with ``command_environment``;
    return its capped output (stdout and stderr interleaved; no piece of one of
    ``secrets`` the cap cuts through is shown, and of a word it cuts through, as many
    bytes as the longest of ``secrets`` are left out, 512 at least), its exit code and
    whether it timed out."""
    shell = shutil.which("bash") or "/bin/sh"
    output = HeadTail(MAX_OUTPUT_BYTES, secrets)
    closed = anyio.Event()
    # Shielded: the command may be running before the process object exists, and an
    # abort landing in between would leave it running, unreaped. The first await after
    # this, inside the try below, takes the abort and ends the session.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            [shell, "-c", command],
            cwd=cwd,
            env=command_environment(cwd, hidden),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    async def collect() -> None:
        assert process.stdout is not None
        try:
            async for chunk in process.stdout:
                output.add(chunk)
        finally:
            closed.set()

    timed_out = False
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(collect)
            try:
                with anyio.move_on_after(time_limit) as deadline:
                    await process.wait()
                timed_out = deadline.cancelled_caught
            finally:
                # also on abort: the cancellation must not stop the session's cleanup
                with anyio.CancelScope(shield=True):
                    await _end_session(process)
            # the pipe closes when the session's last process ends; one that left
            # the session (setsid) may hold it open, so do not wait for it forever
            with anyio.move_on_after(_DRAIN):
                await closed.wait()
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await process.aclose()
    return output.text(), process.returncode, timed_out


@tool(name="bash", mutating=True, command_args=("command",))
async def bash(
    command: str = Field(description="The shell command(s) to run, as one bash script."),
    timeout: int = Field(  # noqa: ASYNC109 - the model-facing argument, enforced below
        DEFAULT_TIMEOUT,
        ge=1,
        le=MAX_TIMEOUT,
        description=f"Seconds before the command is killed (at most {MAX_TIMEOUT}).",
    ),
    *,
    context: ToolContext,
) -> str:
    """Run a bash command in the workspace directory, without input (stdin is empty).
    Returns stdout and stderr interleaved, then the exit code. Output over 30000 bytes
    is cut in the middle. The command and every process it started are killed when it
    times out, when it is aborted, and when it returns (so background jobs end with it).
    """
    if "\0" in command:
        raise ToolError("the command holds a NUL byte, which a shell command cannot contain")
    hidden = hidden_variables(context.agent)
    secrets: tuple[str, ...] = getattr(context.agent, "secrets", ())
    output, code, timed_out = await run_command(
        command, context.workspace, timeout, hidden, secrets
    )
    if timed_out:
        raise TimeoutError(
            f"the command timed out after {timeout} s; it and every process it started "
            f"were killed. Output before that:\n{output}"
        )
    if not output:
        output = NO_OUTPUT
    separator = "" if output.endswith("\n") else "\n"
    return f"{output}{separator}{status(code)}"
