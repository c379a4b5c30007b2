"""`dsh run` with a plugin whose async ``session_event`` observer never returns (docs/cli.md,
exit status): Ctrl-C still ends it with 130 once the observer's grace has run out (the
plugin and the hook named), a second Ctrl-C or a SIGTERM while it ends cuts the grace
short (130, 143), and a second SIGTERM ends the process at once (143); a Ctrl-C after a
SIGTERM cuts it short too (143). The plugin
lowers ``dsh._grace.GRACE_SECONDS`` so that the test does not wait 5 s."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import text_reply, tool_call_reply

GRACE = 1.0
MARGIN = 8.0  # start-up, the exit path, a loaded machine

HANGOBS = f"""
import anyio
import dsh._grace
from dsh import hookimpl

dsh._grace.GRACE_SECONDS = {GRACE}


@hookimpl
async def session_event(event):
    if event.type == "assistant/chunk":
        await anyio.sleep_forever()
"""


@pytest.fixture
def env(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """``cli_env`` with the plugin ``hangobs`` installed (a dist-info on PYTHONPATH)."""
    site = tmp_path / "site"
    info = site / "dsh_hangobs-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_hangobs.py").write_text(HANGOBS)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-hangobs\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\nhangobs = dsh_hangobs\n")
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    return {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": "hangobs"}


def signalled(
    server: Any, signals: list[int], env: dict[str, str], cwd: Path, command: str = "run"
) -> tuple[int, float, str]:
    """``dsh run hi`` (or ``dsh chat``, sent the line ``hi`` through a pipe kept open)
    sent ``signals`` (0.2 s apart) once its observer hangs: its exit status, the
    seconds from the first signal to its end, and its stderr."""
    model = f"openai-compatible:tiny@{server.url}"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dsh.cli",
            "-m",
            model,
            command,
            *(["hi"] if command == "run" else []),
        ],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdin is not None
        if command == "chat":
            process.stdin.write("hi\n")
            process.stdin.flush()
        deadline = time.monotonic() + 30
        while not server.bodies() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.bodies(), "the model was never asked"
        time.sleep(0.5)  # the chunk reaches the observer
        start = time.monotonic()
        for signum in signals:
            process.send_signal(signum)
            time.sleep(0.2)
        _, err = process.communicate(timeout=GRACE + MARGIN)
        return process.returncode, time.monotonic() - start, err
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


SIGINT, SIGTERM = signal.SIGINT, signal.SIGTERM
NAMED = "plugin 'hangobs' hook session_event"


@pytest.mark.parametrize(
    ("signals", "status", "said"),
    [
        ([SIGINT], 130, "did not return within 1 s of the cancel; cancelled"),
        ([SIGTERM], 143, "did not return within 1 s of the disposal; cancelled"),
        ([SIGINT, SIGINT], 130, f"dsh: interrupted again; cancelling {NAMED}"),
        ([SIGINT, SIGTERM], 143, f"dsh: terminated; cancelling {NAMED}"),
        ([SIGTERM, SIGTERM], 143, f"dsh: terminated again; still running: {NAMED}"),
        # Ctrl-C while a SIGTERM's way out runs: one more signal (it was asyncio's own)
        ([SIGTERM, SIGINT], 143, f"dsh: interrupted again; cancelling {NAMED}"),
    ],
    ids=["int", "term", "int-int", "int-term", "term-term", "term-int"],
)
def test_a_hanging_observer_does_not_keep_dsh_run_from_ending(
    model_server: Any,
    env: dict[str, str],
    tmp_path: Path,
    signals: list[int],
    status: int,
    said: str,
) -> None:
    server = model_server([text_reply("part of an answer", then="stall")])
    got, took, err = signalled(server, signals, env, tmp_path)
    assert got == status, err
    assert said in err
    assert "Traceback" not in err
    if len(signals) > 1:  # the grace is cut short: not waited for
        assert took < GRACE + 0.2 * len(signals) + MARGIN / 2, err


def test_a_ctrl_c_while_chat_quits_cuts_the_grace_short(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """Ctrl-C cancels the turn, a second quits, a third (once nothing but its way out
    runs) cancels the observer the disposal waits on: it was asyncio's KeyboardInterrupt."""
    server = model_server([text_reply("part of an answer", then="stall")])
    got, took, err = signalled(server, [SIGINT] * 3, env, tmp_path, "chat")
    assert f"dsh: interrupted again; cancelling {NAMED}" in err
    assert "Traceback" not in err
    assert got == 0, err  # chat quit as asked
    assert took < GRACE + 0.6 + MARGIN / 2, err


def test_a_ctrl_c_after_the_line_editors_quit_cuts_the_grace_short(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """As above, the first two Ctrl-C typed to the line editor (keys of a raw terminal:
    no signal): the SIGINT after them was taken for a first one (130, "interrupted")."""
    pexpect = pytest.importorskip("pexpect")
    pytest.importorskip("prompt_toolkit", reason="the line editor: dsh-core[chat]")
    server = model_server([text_reply("part of an answer", then="stall")])
    model = f"openai-compatible:tiny@{server.url}"
    editor = {k: v for k, v in env.items() if k != "DSH_CHAT_EDITOR"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "dsh.cli", "-m", model, "chat"],
        env={**editor, "TERM": "xterm-256color"},
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
    )
    try:
        child.expect_exact("> ")
        child.send("hi\r")
        deadline = time.monotonic() + 20
        while not server.bodies() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the chunk reaches the observer
        child.send("\x03")  # cancels the turn
        time.sleep(0.3)
        child.send("\x03")  # again within 2 s: quits; the way out waits on the observer
        time.sleep(0.5)
        child.kill(signal.SIGINT)
        child.expect(pexpect.EOF, timeout=GRACE + MARGIN)
        said = child.before
    finally:
        child.close(force=True)
    assert f"interrupted again; cancelling {NAMED}" in said, said[-600:]
    assert child.exitstatus == 0, said[-600:]


STUCK = """
import anyio
from dsh import hookimpl


@hookimpl
async def tools_execute(call):
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):  # a cleanup that never returns
            await anyio.sleep(3600)
"""


@pytest.mark.parametrize(
    ("signals", "status"),
    [
        ([SIGINT] * 4, 130),
        ([SIGTERM] * 3, 143),
        ([SIGTERM] + [SIGINT] * 3, 143),
        ([SIGTERM, SIGINT, SIGTERM], 143),  # the Ctrl-C counts as one more (docs/cli.md)
    ],
    ids=["int-x4", "term-x3", "term-int-x3", "term-int-term"],
)
def test_more_signals_end_a_way_out_stuck_outside_any_grace(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    signals: list[int],
    status: int,
) -> None:
    """A hook no grace bounds (a tools_execute whose shielded cleanup never returns):
    the fourth Ctrl-C, the third SIGTERM, the third Ctrl-C after a SIGTERM end the
    process whatever it waits on."""
    site = tmp_path / "site"
    info = site / "dsh_stuck-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_stuck.py").write_text(STUCK)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-stuck\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\nstuck = dsh_stuck\n")
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    env = {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": "stuck"}
    server = model_server([tool_call_reply("read", {"path": "x"})])
    got, _, err = signalled(server, signals, env, tmp_path)
    assert got == status, err
    assert "again" in err
