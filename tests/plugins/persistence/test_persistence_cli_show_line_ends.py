"""``dsh sessions show`` breaks lines only at ``\\n``: a ``\\r`` (a progress bar's) or
another character ``str.splitlines`` takes for a line end (``\\x0c``, ``\\x85``,
U+2028) in a prompt, an answer or tool output was turned into a line break, while
docs/persistence.md says piped text is as stored and a terminal shows control
characters as ``\\xNN`` (so a ``\\r`` showed as neither)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest
from persistence_cli_support import run, store

from dsh.session import SessionEvent
from dsh_persistence import PersistenceSettings
from dsh_persistence._transcript import transcript
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def stored(settings: PersistenceSettings) -> None:
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("first\rsecond", calls=(), answer="10%\r100%\r\ndone")
    store(settings, "bars", log)


def test_piped_a_carriage_return_is_as_stored(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(settings)
    assert run(config, "show", "bars") == 0
    out = capsys.readouterr().out
    assert "you: first\rsecond\n" in out
    assert "assistant: 10%\r100%\r\n  done\n" in out  # a Windows line end kept whole


def test_at_a_terminal_a_carriage_return_is_shown_as_an_escape(
    settings: PersistenceSettings, config: Path
) -> None:
    stored(settings)
    env = {**os.environ, "DSH_LOAD_PLUGINS": "persistence"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "dsh.cli", "-c", str(config), "sessions", "show", "bars"],
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
    )
    out = str(child.read())
    child.close()
    assert child.exitstatus == 0, out
    assert "you: first\\x0dsecond\r\n" in out  # the terminal's line ends are \r\n
    assert "assistant: 10%\\x0d100%\r\n  done\r\n" in out  # a Windows line end: a line end


def event(kind: str, data: dict[str, object]) -> SessionEvent:
    return SessionEvent(kind, 0, 0.0, dict(data))


@pytest.mark.parametrize("mark", ["\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"])
def test_only_a_newline_breaks_a_line(mark: str) -> None:
    content = f"one{mark}two\nthree\n"
    result = event("tool/result", {"call_id": "c", "content": content, "is_error": False})
    assert transcript([result]) == f"  <- one{mark}two\n     three\n"
    prompt = event("user/message", {"content": f"ask{mark}more"})
    assert transcript([prompt]) == f"you: ask{mark}more\n"


def test_tool_output_is_cut_by_its_newlines() -> None:
    """Eight lines are shown: a ``\\r`` in each does not make them sixteen."""
    content = "\n".join(f"{n}%\r{n}0%" for n in range(8))
    result = event("tool/result", {"call_id": "c", "content": content, "is_error": False})
    assert "more lines" not in transcript([result])
    nine = event("tool/result", {"call_id": "c", "content": content + "\nlast", "is_error": False})
    assert transcript([nine]).endswith("     ... (1 more lines)\n")
