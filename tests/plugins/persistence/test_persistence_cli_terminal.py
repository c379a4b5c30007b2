"""``dsh sessions list`` and ``show`` as a person reads them.

- At a terminal, control characters of prompts, answers, tool output and workspaces are
  shown as ``\\xNN``, as ``dsh run`` shows them (docs/cli.md): a stored answer must not
  retitle or clear the terminal it is listed in. Piped, the text is left as stored.
- Columns are padded by terminal cells: a CJK workspace takes two per character.
- ``show`` of a session whose turn another process is running says so, instead of
  calling the turn interrupted and showing the closing events loading would add.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest
from persistence_cli_support import run, store

from dsh_persistence import PersistenceSettings, SessionBackend, SessionInfo, open_backend
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

NASTY = "esc \x1b]0;PWNED\x07 \x1b[2J end"


def stored_nasty(settings: PersistenceSettings) -> None:
    log = LogBuilder(start=1_700_000_000.0)
    log.turn(NASTY, calls=(), answer=f"answer {NASTY}")
    backend = open_backend(settings)
    try:
        info = SessionInfo("nasty", 1_700_000_000.0, cwd="/w", title=NASTY)
        backend.append(info, log.events, durable=True)
    finally:
        backend.close()


def at_terminal(config: Path, *args: str) -> str:
    env = {**os.environ, "DSH_LOAD_PLUGINS": "persistence"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "dsh.cli", "-c", str(config), "sessions", *args],
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
    )
    out = child.read()
    child.close()
    assert child.exitstatus == 0, out
    return str(out)


def test_list_and_show_escape_control_characters_at_a_terminal(
    settings: PersistenceSettings, config: Path
) -> None:
    stored_nasty(settings)
    shown = "esc \\x1b]0;PWNED\\x07 \\x1b[2J end"
    for args in (("list",), ("show", "nasty")):
        out = at_terminal(config, *args)
        assert "\x1b" not in out and "\x07" not in out, args
        assert shown in out, args
    assert f"assistant: answer {shown}" in at_terminal(config, "show", "nasty")


def test_piped_the_text_is_as_stored(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored_nasty(settings)
    assert run(config, "list") == 0
    assert NASTY in capsys.readouterr().out
    assert run(config, "show", "nasty") == 0
    assert f"answer {NASTY}" in capsys.readouterr().out


def cells(text: str) -> int:
    wide = ("W", "F")
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in wide else 1
        for c in text
    )


def test_columns_are_padded_by_terminal_cells(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = open_backend(settings)
    try:
        for index, (session, where) in enumerate(
            [("s-😀", "/项目/子目录"), ("s-e\u0301", "/proj"), ("plain", "/x")]
        ):
            log = LogBuilder(start=1_700_000_000.0 + index)
            log.turn("hi", calls=())
            info = SessionInfo(session, log.events[0].time, cwd=where, title="TITLE-HERE")
            backend.append(info, log.events, durable=True)
    finally:
        backend.close()

    assert run(config, "list") == 0
    lines = capsys.readouterr().out.splitlines()
    starts = {cells(line[: line.index("TITLE")]) for line in lines}
    assert len(starts) == 1, lines


def test_a_very_long_id_is_cut_in_the_table(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_id = "main-session-" + "x" * 150
    log = LogBuilder()
    log.turn("hi", calls=())
    store(settings, long_id, log)

    assert run(config, "list") == 0
    header, row = capsys.readouterr().out.splitlines()
    assert row.split()[0] == long_id[:47] + "…"
    assert header.index("UPDATED") == row.index(long_id[:47] + "…") + 50
    assert run(config, "list", "--json") == 0
    assert long_id in capsys.readouterr().out  # whole


def running_elsewhere(opener: Callable[[], SessionBackend], config: Path, capsys: Any) -> None:
    """``show`` of a session whose turn 2 another backend (process) holds the claim of."""
    log = LogBuilder()
    log.turn("first", calls=())
    log.turn("go on")
    cut = log.events[: len(log.events) - 4]  # turn 2: the tool call, no result
    writer = opener()
    try:
        writer.append(SessionInfo("busy", 1.0), cut, durable=True)
    finally:
        writer.close()
    other = opener()  # another process's claim, as far as the store can tell
    try:
        assert other.claim("busy")
        assert run(config, "show", "busy") == 0
        out = capsys.readouterr().out
        assert out.endswith("(turn 2 is still running in another process)\n")
        assert "interrupted" not in out and "outcome unknown" not in out
        assert "  -> add" in out
    finally:
        other.close()

    assert run(config, "show", "busy") == 0  # the claim let go: it crashed
    out = capsys.readouterr().out
    assert "ended: interrupted" in out and "closing events were added on load" in out


def test_show_of_a_turn_running_elsewhere_says_so(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    running_elsewhere(lambda: open_backend(settings), config, capsys)


def test_show_of_a_turn_running_elsewhere_says_so_on_postgresql(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from dsh_persistence import PostgresBackend

    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence:\n  backend: postgresql\n  url: '{pg_url}'\n")
    running_elsewhere(lambda: PostgresBackend(pg_url), config, capsys)


def test_cutting_an_id_measures_it_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """It dropped a character at a time and measured the rest again: a list with a
    12,000-character id took 25 s (the merged review); the cut is the same."""
    from dsh_persistence import _listing

    calls: list[int] = []
    measure = _listing._cells
    monkeypatch.setattr(_listing, "_cells", lambda text: calls.append(1) or measure(text))
    assert _listing._cut("項" + "a" * 5000, 48) == "項" + "a" * 45 + "…"
    assert _listing._cut("項目", 4) == "項目" and _listing._cut("項目x", 4) == "項…"
    assert len(calls) <= 3
