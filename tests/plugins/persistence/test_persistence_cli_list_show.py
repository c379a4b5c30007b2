"""``dsh sessions list | show | delete``, through ``dsh.cli.main``.

Every test writes a ``dsh.yml`` whose ``persistence:`` section chooses the backend and
the directory, and passes it with ``-c``: the command must honour it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from persistence_cli_support import run, store, two_sessions

from dsh_persistence import PersistenceSettings
from dsh_persistence.testing import JsonlDamage, LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def test_list_shows_sessions_newest_first(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_sessions(settings)

    assert run(config, "list") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "UPDATED", "TURNS", "WORKSPACE", "TITLE"]
    assert [line.split()[0] for line in lines[1:]] == ["new-session", "old-session"]
    assert run(config, "list", "--json", "-n", "1") == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["id"] == "new-session" and row["turns"] == 2


def test_list_with_no_sessions_says_where_it_looked(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(config, "list") == 0
    captured = capsys.readouterr()
    where = (
        settings.database_path() if settings.backend == "sqlite" else settings.session_directory()
    )
    assert (captured.out, captured.err) == ("", f"no stored sessions in {where}\n")


def test_show_prints_a_readable_transcript(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_sessions(settings)

    assert run(config, "show", "new") == 0  # a unique prefix is enough
    out = capsys.readouterr().out
    for expected in (
        "session new-session",
        "--- turn 1 ---",
        "you: what is 1+2?",
        "assistant: let me see",
        '  -> add {"a": 1, "b": 2}',
        "  <- 3",
        "--- turn 1 ended: completed, 20 in / 4 out ---",
    ):
        assert expected in out


def test_show_without_an_id_shows_the_session_updated_last(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(config, "show") == 2
    assert capsys.readouterr().err == "dsh: error: there is no stored session yet\n"
    two_sessions(settings)
    assert run(config, "show") == 0
    assert capsys.readouterr().out.startswith("session new-session, created ")


def test_show_json_prints_the_stored_events(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = two_sessions(settings)

    assert run(config, "show", "new-session", "--json") == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [event.to_dict() for event in log.events]


def test_show_says_when_the_last_turn_was_closed_on_load(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = LogBuilder()
    log.turn("go on")
    cut = LogBuilder()
    cut.events = log.events[:7]  # the tool call is logged, its result is not
    store(settings, "cut", cut)

    assert run(config, "show", "cut") == 0
    out = capsys.readouterr().out
    assert "ended: interrupted" in out and "outcome unknown" in out
    assert "closing events were added on load" in out


def test_delete_removes_sessions_and_reports_unknown_ones(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_sessions(settings)

    assert run(config, "delete", "old-session", "nope", "new-") == 1
    captured = capsys.readouterr()
    assert captured.out == "deleted old-session\n"
    assert captured.err == (
        "dsh: error: no stored session 'nope'\n"
        "dsh: error: no stored session 'new-' (delete takes whole ids: new-session?)\n"
    )
    assert run(config, "list", "--json") == 0
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == ["new-session"]


@pytest.mark.parametrize(
    ("wanted", "message"),
    # '' began every id ("'' matches 2 sessions"): it is no id
    [("zzz", "no stored session 'zzz'"), ("", "the session id is empty: give one")],
)
def test_unknown_or_ambiguous_ids_are_one_clear_line(
    settings: PersistenceSettings,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    wanted: str,
    message: str,
) -> None:
    two_sessions(settings)

    assert run(config, "show", wanted) == 2
    err = capsys.readouterr().err
    assert err.startswith("dsh: error: ") and message in err and "Traceback" not in err


def test_an_ambiguous_prefix_says_how_many_it_did_not_list(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for index in range(7):
        log = LogBuilder(start=1_700_000_000.0 + index)
        log.turn("hi", calls=())
        store(settings, f"s-{index}", log)

    assert run(config, "show", "s-") == 2
    assert "'s-' matches 7 sessions: s-0, s-1, s-2, s-3, s-4 and 2 more" in capsys.readouterr().err


@pytest.mark.parametrize("limit", ["0", "-1", "two"])
def test_list_refuses_a_limit_below_one(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str], limit: str
) -> None:
    two_sessions(settings)
    with pytest.raises(SystemExit) as info:
        run(config, "list", "-n", limit)
    assert info.value.code == 2
    assert f"argument -n/--limit: {limit!r} is not a whole number of 1 or more" in (
        capsys.readouterr().err
    )


def test_a_newer_session_file_is_refused_saying_so(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if settings.backend != "jsonl":
        pytest.skip("per-session format versions are a JSONL header field")
    two_sessions(settings)
    JsonlDamage(settings.session_directory()).make_newer("new-session")

    assert run(config, "show", "new-session") == 2
    assert "newer than this dsh-persistence reads" in capsys.readouterr().err


def test_delete_leaves_a_file_that_is_not_a_session_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``list`` calls ``data.jsonl`` "not a dsh session file": ``delete data`` says so
    and leaves it; the other ids named are still deleted."""
    settings = PersistenceSettings(directory=tmp_path / "sessions")
    two_sessions(settings)
    (tmp_path / "sessions" / "data.jsonl").write_text('{"x":1}\n')
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence:\n  directory: {tmp_path / 'sessions'}\n")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")

    assert run(config, "delete", "data", "old-session") == 1
    captured = capsys.readouterr()
    assert captured.out == "deleted old-session\n"
    path = tmp_path / "sessions" / "data.jsonl"
    assert captured.err == (
        f"dsh: error: {path}: not a dsh session file (no 'dsh-session' header); not deleted\n"
    )
    assert path.read_text() == '{"x":1}\n'
