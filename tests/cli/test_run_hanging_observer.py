"""`dsh run` with a plugin whose async ``session_event`` observer never returns (docs/cli.md,
exit status): Ctrl-C still ends it with 130 once the observer's grace has run out (the
plugin and the hook named), a second Ctrl-C or a SIGTERM while it ends cuts the grace
short (130, 143), and a second SIGTERM ends the process at once (143); a Ctrl-C after a
SIGTERM cuts it short too (143). The plugin lowers ``dsh._grace.GRACE_SECONDS`` so that
the test does not wait 5 s, or raises it where the grace is cut short (each signal is
sent once the one before took effect, which a loaded machine may make slow), and marks
what the test waits for in a file: no sleep stands for "by now it has happened"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from cli_support import text_reply, tool_call_reply

GRACE = 1.0  # waited out: the grace is reported
LONG = 60.0  # cut short: signals acknowledged one by one fit in it however slow the machine
MARGIN = 8.0  # start-up, the exit path, a loaded machine

#: The plugins' shared start: ``mark(line)`` appends a line to $DSH_TEST_MARKS, as does
#: every grace that starts ("grace cancel"), for the test to wait on.
MARKING = """
import os

import anyio
import dsh._grace
from dsh import hookimpl

_start = dsh._grace.Grace.start


def mark(line):
    with open(os.environ["DSH_TEST_MARKS"], "a") as marks:
        marks.write(line + "\\n")


def _started(self, reason):
    _start(self, reason)
    mark("grace " + reason)


dsh._grace.Grace.start = _started
"""

HANGOBS = (
    MARKING
    + """
dsh._grace.GRACE_SECONDS = float(os.environ["DSH_TEST_GRACE"])


@hookimpl
async def session_event(event):
    if event.type == "assistant/chunk":
        mark("chunk")
        await anyio.sleep_forever()
"""
)


def installed(cli_env: dict[str, str], tmp_path: Path, name: str, source: str) -> dict[str, str]:
    """``cli_env`` with the plugin ``name`` (``source``) installed (a dist-info on
    PYTHONPATH), alone, its marks in ``tmp_path / "marks"``."""
    site = tmp_path / "site"
    info = site / f"dsh_{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (site / f"dsh_{name}.py").write_text(source)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: dsh-{name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[dsh]\n{name} = dsh_{name}\n")
    path = os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])
    marks = str(tmp_path / "marks")
    return {**cli_env, "PYTHONPATH": path, "DSH_LOAD_PLUGINS": name, "DSH_TEST_MARKS": marks}


@pytest.fixture
def env(cli_env: dict[str, str], tmp_path: Path) -> Callable[[float], dict[str, str]]:
    """``env(grace)``: ``cli_env`` with the plugin ``hangobs`` installed, its observer's
    grace lowered to ``grace`` s (``dsh._grace.GRACE_SECONDS``)."""
    return lambda grace: {
        **installed(cli_env, tmp_path, "hangobs", HANGOBS),
        "DSH_TEST_GRACE": str(grace),
    }


def marks(cwd: Path) -> list[str]:
    """The lines the plugin marked so far."""
    path = cwd / "marks"
    return path.read_text().splitlines() if path.exists() else []


def dsh_lines(cwd: Path) -> list[str]:
    """dsh's lines on stderr so far (``signalled``'s) but the model named at the start."""
    lines = (cwd / "stderr").read_text().splitlines()
    return [line for line in lines if line.startswith("dsh: ") and "dsh: model" not in line]


def wait_for(holds: Callable[[], bool], what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not holds():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.02)


def _took_effect(cwd: Path, number: int, before: int, graces: bool) -> bool:
    if graces:
        return sum(line.startswith("grace ") for line in marks(cwd)) >= number
    return len(dsh_lines(cwd)) + len(marks(cwd)) > before


def signalled(
    server: Any,
    signals: list[int],
    env: dict[str, str],
    cwd: Path,
    command: str = "run",
    ready: str = "chunk",
    graces: bool = True,
) -> tuple[int, float, str]:
    """``dsh run hi`` (or ``dsh chat``, sent the line ``hi`` through a pipe kept open)
    sent ``signals`` once the plugin marks ``ready`` (its observer hangs), each once the
    one before took effect (``graces``: as many graces have started as signals were
    sent; else dsh said a line more, or a grace started): its exit status, the seconds
    from the first signal to its end, and its stderr."""
    model = f"openai-compatible:tiny@{server.url}"
    with (cwd / "stderr").open("w") as err:
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
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
        )
    try:
        assert process.stdin is not None
        if command == "chat":
            process.stdin.write("hi\n")
            process.stdin.flush()
        wait_for(lambda: ready in marks(cwd), f"the plugin's {ready!r}")
        start = time.monotonic()
        for number, signum in enumerate(signals, 1):
            before = len(dsh_lines(cwd)) + len(marks(cwd))
            process.send_signal(signum)
            if number < len(signals):
                wait_for(partial(_took_effect, cwd, number, before, graces), f"signal {number}")
        process.communicate(timeout=LONG + MARGIN)
        return process.returncode, time.monotonic() - start, (cwd / "stderr").read_text()
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
    env: Callable[[float], dict[str, str]],
    tmp_path: Path,
    signals: list[int],
    status: int,
    said: str,
) -> None:
    server = model_server([text_reply("part of an answer", then="stall")])
    grace = GRACE if len(signals) == 1 else LONG  # waited out, else cut short
    got, took, err = signalled(server, signals, env(grace), tmp_path)
    assert got == status, err
    assert said in err
    assert "Traceback" not in err
    if len(signals) > 1:  # the grace is cut short: not waited for
        assert took < LONG / 2, err


def test_a_ctrl_c_while_chat_quits_cuts_the_grace_short(
    model_server: Any, env: Callable[[float], dict[str, str]], tmp_path: Path
) -> None:
    """Ctrl-C cancels the turn, a second quits, a third (once nothing but its way out
    runs) cancels the observer the disposal waits on: it was asyncio's KeyboardInterrupt."""
    server = model_server([text_reply("part of an answer", then="stall")])
    got, took, err = signalled(server, [SIGINT] * 3, env(LONG), tmp_path, "chat")
    assert f"dsh: interrupted again; cancelling {NAMED}" in err
    assert "Traceback" not in err
    assert got == 0, err  # chat quit as asked
    assert took < LONG / 2, err


def test_a_ctrl_c_after_the_line_editors_quit_cuts_the_grace_short(
    model_server: Any, env: Callable[[float], dict[str, str]], tmp_path: Path
) -> None:
    """As above, the first two Ctrl-C typed to the line editor (keys of a raw terminal:
    no signal): the SIGINT after them was taken for a first one (130, "interrupted")."""
    pexpect = pytest.importorskip("pexpect")
    pytest.importorskip("prompt_toolkit", reason="the line editor: dsh-core[chat]")
    server = model_server([text_reply("part of an answer", then="stall")])
    model = f"openai-compatible:tiny@{server.url}"
    editor = {k: v for k, v in env(LONG).items() if k != "DSH_CHAT_EDITOR"}
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
        wait_for(lambda: "chunk" in marks(tmp_path), "the chunk reaching the observer")
        child.send("\x03")  # cancels the turn
        wait_for(lambda: "grace cancel" in marks(tmp_path), "the turn's cancel")
        child.send("\x03")  # again within 2 s: quits; the way out waits on the observer
        wait_for(lambda: "grace disposal" in marks(tmp_path), "the disposal")
        child.kill(signal.SIGINT)
        child.expect(pexpect.EOF, timeout=LONG / 2)  # the grace cut short
        said = child.before
    finally:
        child.close(force=True)
    assert f"interrupted again; cancelling {NAMED}" in said, said[-600:]
    assert child.exitstatus == 0, said[-600:]


STUCK = (
    MARKING
    + """

@hookimpl
async def tools_execute(call):
    mark("execute")
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):  # a cleanup that never returns
            await anyio.sleep(3600)
"""
)


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
    env = installed(cli_env, tmp_path, "stuck", STUCK)
    server = model_server([tool_call_reply("read", {"path": "x"})])
    got, _, err = signalled(server, signals, env, tmp_path, ready="execute", graces=False)
    assert got == status, err
    assert "again" in err
