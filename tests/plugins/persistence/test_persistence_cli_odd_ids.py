"""``dsh sessions`` shows an id holding a line end, a control or a bidi character
escaped (as ``repr`` shows it), at a terminal or not: in ``list``, ``show``, ``delete``
and the errors naming ids. Such an id is possible only by storing through a backend
directly (dsh's own ids are plain), but printed raw it broke ``list`` piped into a
program reading one session a line, and could reorder or hide what followed it.
Plain ids (spaces and non-ASCII letters too) print as they are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from persistence_cli_support import run, store

from dsh_persistence import PersistenceSettings
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

ODD = ["line\nbreak", "bidi\u202eevil", "esc\x1b[2Jx"]
#: What must never reach the output raw: C0 controls but the line end, DEL, C1, bidi.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def stored(settings: PersistenceSettings, *ids: str) -> None:
    for session_id in ids:
        log = LogBuilder()
        log.turn("hello", calls=())
        store(settings, session_id, log)


def test_list_shows_odd_ids_escaped_one_session_a_line(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(settings, *ODD, "plain id é")
    assert run(config, "list") == 0
    out = capsys.readouterr().out
    assert not RAW.search(out)
    lines = out.splitlines()
    assert len(lines) == 1 + len(ODD) + 1
    firsts = sorted(line.split("  ")[0].rstrip() for line in lines[1:])
    assert firsts == sorted([*(repr(odd) for odd in ODD), "plain id é"])


@pytest.mark.parametrize("odd", ODD)
def test_show_and_delete_show_an_odd_id_escaped(
    odd: str, settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(settings, odd)
    assert run(config, "show", odd) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"session {odd!r}, created ")
    assert not RAW.search(out) and "\n" not in out.splitlines()[0]
    assert run(config, "delete", odd) == 0
    assert capsys.readouterr().out == f"deleted {odd!r}\n"


def test_errors_naming_stored_ids_show_them_escaped(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored(settings, "odd\nA")
    assert run(config, "delete", "odd") == 1  # delete takes whole ids: the hint names it
    err = capsys.readouterr().err
    assert not RAW.search(err) and err.count("\n") == 1
    assert err.endswith(" (delete takes whole ids: 'odd\\nA'?)\n")


def test_a_prefix_of_several_odd_ids_names_them_escaped(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The core's "matches N sessions" error (``find_session``) lists the ids it
    matched as ``dsh sessions`` shows them: it printed them raw, across lines."""
    stored(settings, "odd\nA", "odd\u202eB")
    assert run(config, "show", "odd") != 0
    err = capsys.readouterr().err
    assert not RAW.search(err) and err.count("\n") == 1
    assert "'odd' matches 2 sessions: 'odd\\nA', 'odd\\u202eB'" in err


def test_an_id_written_as_another_ids_repr_is_quoted(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``'odd\\nA'`` (quotes, a backslash and an n) is a plain id, but shown as it is it
    reads as the escaped ``odd<line end>A``: it is quoted too, so each shows as one id."""
    looks = "'odd\\nA'"
    stored(settings, looks, "odd\nA")
    assert run(config, "list") == 0
    firsts = sorted(line.split("  ")[0] for line in capsys.readouterr().out.splitlines()[1:])
    assert firsts == sorted([repr(looks), repr("odd\nA")])
    assert run(config, "delete", looks) == 0
    assert capsys.readouterr().out == f"deleted {looks!r}\n"
