"""The ``bash`` tool: output and exit codes, the output cap, timeouts, and that the
whole process group ends on return, timeout and abort (no orphans)."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from loop_support import turn_events

from dsh.builtin_tools import _bash
from dsh.messages import ToolResult
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")

CallTool = Callable[..., Awaitable[ToolResult]]
LIMIT = 10  # seconds any single wait in these tests may take

# Starts a background grandchild and a foreground one, writes both pids, then waits.
TWO_SLEEPERS = "sleep 30 & echo $! > bg.pid; sleep 31 & echo $! > fg.pid; wait"


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: some containers never reap orphans)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel (counts zombies, which launchd reaps)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rfind(")") + 2] not in "ZX"


async def pids(workspace: Path, *names: str) -> list[int]:
    """The pids the command wrote, once it has written them all."""
    with anyio.fail_after(LIMIT):
        # a file appearing has no event to wait for: poll
        while not all((workspace / n).exists() and (workspace / n).read_text() for n in names):  # noqa: ASYNC110
            await anyio.sleep(0.02)
    return [int((workspace / n).read_text()) for n in names]


async def gone(*pid_list: int) -> bool:
    """Whether every pid has stopped within the grace period (plus slack)."""
    with anyio.move_on_after(_bash.KILL_GRACE + 3):
        while any(running(p) for p in pid_list):  # noqa: ASYNC110 - nor a process ending
            await anyio.sleep(0.02)
    return not any(running(p) for p in pid_list)


async def test_bash_through_the_loop_runs_in_the_workspace(in_loop: Any, workspace: Path) -> None:
    [result] = await in_loop(("bash", {"command": "pwd; echo oops >&2; exit 3"}))
    assert result["is_error"] is False
    assert result["content"] == f"{workspace}\noops\n[exit code 3]"


async def test_bash_reports_output_and_exit_code(call_tool: CallTool) -> None:
    assert (await call_tool("bash", command="printf 'a\\nb'")).content == "a\nb\n[exit code 0]"
    assert (await call_tool("bash", command="true")).content == "(no output)\n[exit code 0]"
    killed = await call_tool("bash", command="kill -KILL $$")
    assert killed.content == "(no output)\n[killed by signal SIGKILL]"
    quiet = await call_tool("bash", command='read line; echo "got [$line]"')
    assert quiet.content == "got []\n[exit code 0]"  # stdin is empty, never the terminal


async def test_bash_keeps_the_head_and_tail_of_long_output(call_tool: CallTool) -> None:
    # 100000 lines of "NNNNNN\n": 700000 bytes, far over the cap
    result = await call_tool("bash", command="seq -w 100000 199999")
    lines = result.content.splitlines()
    half = _bash.MAX_OUTPUT_BYTES // 2
    assert lines[0] == "100000" and lines[-2] == "199999" and lines[-1] == "[exit code 0]"
    (note,) = [line for line in lines if line.startswith("[... ")]
    found = re.fullmatch(
        r"\[\.\.\. (\d+) bytes of output cut here: showing the first (\d+) and the last "
        r"(\d+) bytes \.\.\.\]",
        note,
    )
    assert found is not None, note
    cut, head, tail = map(int, found.groups())
    assert cut + head + tail == 700_000
    assert half - 7 < head <= half and half - 7 < tail <= half
    # a line the cut went through is left out whole: no half line is shown
    assert {len(line) for line in lines[:-1] if line and line != note} == {6}
    assert len(result.content) < _bash.MAX_OUTPUT_BYTES + 200


async def test_bash_timeout_kills_the_group(call_tool: CallTool, workspace: Path) -> None:
    started = time.monotonic()
    result = await call_tool("bash", command=f"echo before; {TWO_SLEEPERS}", timeout=1)
    assert time.monotonic() - started < 1 + _bash.KILL_GRACE + 1
    assert result.is_error
    assert "the command timed out after 1 s; it and every process it started were killed" in (
        result.content
    )
    assert result.content.endswith("Output before that:\nbefore\n")
    assert await gone(*await pids(workspace, "bg.pid", "fg.pid"))


@pytest.mark.parametrize("seconds", [0, _bash.MAX_TIMEOUT + 1])
async def test_bash_timeout_is_bounded(call_tool: CallTool, seconds: int) -> None:
    result = await call_tool("bash", command="true", timeout=seconds)
    assert result.is_error and "timeout: Input should be" in result.content


async def test_background_jobs_end_when_the_command_returns(
    call_tool: CallTool, workspace: Path
) -> None:
    started = time.monotonic()
    result = await call_tool("bash", command="sleep 30 & echo $! > bg.pid; echo started")
    assert time.monotonic() - started < LIMIT
    assert result.content == "started\n[exit code 0]"
    assert await gone(*await pids(workspace, "bg.pid"))


async def test_processes_ignoring_sigterm_get_sigkill_after_the_grace(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bash, "KILL_GRACE", 0.3)
    command = "trap '' TERM; sleep 30 & echo $! > bg.pid; echo done"
    started = time.monotonic()
    result = await call_tool("bash", command=command)
    assert result.content == "done\n[exit code 0]"
    [pid] = await pids(workspace, "bg.pid")
    assert not running(pid)  # ended before the tool returned
    assert 0.3 <= time.monotonic() - started < LIMIT


async def test_abort_kills_the_whole_process_group(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop aborts the step while bash awaits its command: the shell and both of
    its children are gone, and the turn ends ``aborted``."""
    # SIGTERM must suffice: with a grace longer than the wait, a SIGKILL would come too
    # late (a bound on the grace itself fails on a loaded machine)
    monkeypatch.setattr(_bash, "KILL_GRACE", 3 * LIMIT)
    model = ScriptedModel([tool_calls(("bash", {"command": TWO_SLEEPERS})), text("unused")])
    async with scripted_harness(model, load_entry_points=False, workspace=workspace) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        agent.send("go")
        children = await pids(workspace, "bg.pid", "fg.pid")
        assert all(running(p) for p in children)
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert not any(running(p) for p in children)  # gone before the turn ended
        events = list(agent.session.events)
    [result] = [e.data for e in events if e.type == "tool/result"]
    assert result["is_error"] is True
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == ["aborted"]


async def test_abort_escalates_to_sigkill_for_processes_ignoring_sigterm(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cleanup outlives the cancellation that triggered it: the grace, the SIGKILL
    and the reaping all happen although the step is already cancelled."""
    monkeypatch.setattr(_bash, "KILL_GRACE", 0.3)
    command = f"trap '' TERM; echo $$ > shell.pid; {TWO_SLEEPERS}"
    model = ScriptedModel([tool_calls(("bash", {"command": command})), text("unused")])
    async with scripted_harness(model, load_entry_points=False, workspace=workspace) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        agent.send("go")
        processes = await pids(workspace, "shell.pid", "bg.pid", "fg.pid")
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert not any(running(p) for p in processes)


async def test_an_abort_while_the_process_starts_still_ends_it(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command runs before ``open_process`` hands the process back (its pipes are
    still being connected): an abort landing then must not leave it running."""
    real = anyio.open_process
    aborted = anyio.Event()

    async def slow_to_hand_back(*args: Any, **kwargs: Any) -> Any:
        process = await real(*args, **kwargs)
        await aborted.wait()  # the abort lands here
        return process

    monkeypatch.setattr(anyio, "open_process", slow_to_hand_back)
    command = f"echo $$ > shell.pid; {TWO_SLEEPERS}"
    model = ScriptedModel([tool_calls(("bash", {"command": command}))])
    async with scripted_harness(model, load_entry_points=False, workspace=workspace) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        agent.send("go")
        processes = await pids(workspace, "shell.pid", "bg.pid", "fg.pid")
        agent.abort()
        aborted.set()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert not any(running(p) for p in processes)
        ends = [e.data["reason"] for e in agent.session.events if e.type == "turn/end"]
    assert ends == ["aborted"]


async def test_abort_through_run_turn_leaves_queued_turns_working(workspace: Path) -> None:
    """After an aborted bash call the agent still runs bash normally."""
    model = ScriptedModel(
        [
            tool_calls(("bash", {"command": "echo $$ > shell.pid; sleep 30"})),
            tool_calls(("bash", {"command": "echo again"})),
            text("done"),
        ]
    )
    async with scripted_harness(model, load_entry_points=False, workspace=workspace) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        agent.send("first")
        [shell] = await pids(workspace, "shell.pid")
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert not running(shell)
        events = await run_turn(agent, "second")
    [result] = [e.data for e in events if e.type == "tool/result"]
    assert result["content"] == "again\n[exit code 0]"


async def test_bash_does_not_pass_the_model_keys_to_commands(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default-provider-key")
    monkeypatch.setenv("TEAM_LLM_KEY", "sk-configured-key")
    monkeypatch.setenv("DSH_TEST_VISIBLE", "still-here")
    config = (
        "models:\n  team:\n    provider: openai-compatible\n    model: x\n"
        "    base_url: http://127.0.0.1:9/v1\n    api_key_env: TEAM_LLM_KEY\n"
    )
    model = ScriptedModel([tool_calls(("bash", {"command": "env"})), text("ok")])
    events = await turn_events(
        model, workspace=workspace, config=config, prompt="env?", within=LIMIT
    )
    [result] = [e.data for e in events if e.type == "tool/result"]
    assert "DSH_TEST_VISIBLE=still-here" in result["content"]
    assert "sk-default-provider-key" not in result["content"]
    assert "sk-configured-key" not in result["content"]
    assert os.environ["OPENAI_API_KEY"] == "sk-default-provider-key"  # the harness keeps it


async def test_bash_runs_in_the_real_directory_whatever_pwd_dsh_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dsh started from a shell that entered the workspace through a symlink
    (``~/proj -> /data/proj``) passed on that shell's ``PWD`` and ``OLDPWD``: bash took
    the link for its directory, so ``cd ..`` went to the link's parent and ``cd -`` to
    the user's previous directory, where a permission check does not look (and a
    ``CDPATH`` sent ``cd NAME`` elsewhere than ``./NAME``). The command now runs with
    ``PWD`` the real directory and no ``OLDPWD`` nor ``CDPATH``."""
    real, home = tmp_path / "data" / "proj", tmp_path / "home"
    real.mkdir(parents=True)
    home.mkdir()
    (home / "proj").symlink_to(real)
    monkeypatch.chdir(home / "proj")
    monkeypatch.setenv("PWD", str(home / "proj"))
    monkeypatch.setenv("OLDPWD", str(home))
    monkeypatch.setenv("CDPATH", str(tmp_path))  # `cd data` would go to tmp_path/data
    command = 'echo "$PWD|${OLDPWD-none}|${CDPATH-none}"; cd .. && pwd; cd - || echo "no cd -"'
    model = ScriptedModel([tool_calls(("bash", {"command": command})), text("ok")])
    events = await turn_events(model, workspace=home / "proj", prompt="go", within=LIMIT)
    [result] = [e.data for e in events if e.type == "tool/result"]
    lines = result["content"].splitlines()
    assert lines[:2] == [f"{real.resolve()}|none|none", str(real.resolve().parent)], lines
    assert lines[-2:] == [str(real.resolve()), "[exit code 0]"], lines  # cd - goes back
    assert os.environ["PWD"] == str(home / "proj")  # dsh's own is left as it was


@pytest.mark.parametrize(
    ("script", "head", "tail"),
    [
        ("'x' + 'é' * 20000", "x" + "é" * 7243, "é" * 7244),
        ("'é' * 20000 + 'x'", "é" * 7244, "é" * 7243 + "x"),
    ],
)
async def test_the_cap_cuts_between_characters(
    call_tool: CallTool, script: str, head: str, tail: str
) -> None:
    """Non-ASCII letters are a word's as ASCII ones are: 512 bytes of the cut word are
    left out on each side, and each cut is moved back to a character's start (a
    U+FFFD showed for the character it split)."""
    result = await call_tool("bash", command=f'python3 -c "import sys; sys.stdout.write({script})"')
    assert "\ufffd" not in result.content
    shown_head, rest = result.content.split("\n[... ")
    assert shown_head == head
    assert rest.split("...]\n")[1] == f"{tail}\n[exit code 0]"
