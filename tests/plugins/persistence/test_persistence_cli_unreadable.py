"""Files in a JSONL store that dsh cannot read as the session their name gives.

Another program's ``notes.jsonl`` (or a session of a newer format) was listed with an
empty workspace, which means "not recorded" and so every workspace: ``dsh sessions
show`` (and ``dsh run --continue``, ``list --here``) took it anywhere and failed with its
error. A session file renamed or copied by hand was listed under its header's id, which
``show``/``delete`` could not reach ("was deleted meanwhile"; a delete hint naming the
id given). Now such files are listed under the id their name gives, with an ``error``
(``list --json``) that says what is wrong, and are no workspace's last session.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from persistence_cli_support import run

from dsh_persistence import PersistenceSettings, SessionInfo, open_backend
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


@pytest.fixture
def jsonl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the store's directory, a dsh.yml choosing it); one session, run elsewhere."""
    directory = tmp_path / "sessions"
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence:\n  directory: {directory}\n")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.chdir(tmp_path)
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("hello", calls=())
    backend = open_backend(PersistenceSettings(directory=directory))
    try:
        backend.append(
            SessionInfo("s1", 1_700_000_000.0, cwd="/elsewhere", title="hello"),
            log.events,
            durable=True,
        )
    finally:
        backend.close()
    return directory, config


def listed(config: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    assert run(config, "list", "--json") == 0
    return {row["id"]: row for row in json.loads(capsys.readouterr().out)}


def test_another_programs_file_is_no_workspaces_last_session(
    jsonl: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory, config = jsonl
    (directory / "notes.jsonl").write_text('{"some": "other program"}\n')
    here = str(tmp_path.resolve())

    assert run(config, "show") == 2
    assert capsys.readouterr().err == (
        f"dsh: error: no stored session last ran in {here} "
        "(the last one, s1, is from /elsewhere: give its id)\n"
    )
    assert run(config, "list", "--here") == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"no stored sessions in {directory} that last ran in {here}\n"

    rows = listed(config, capsys)
    notes = rows["notes"]
    assert notes["error"] == f"{directory / 'notes.jsonl'}:1: not a dsh session file " + (
        "(no 'dsh-session' header)"
    )
    assert (notes["title"], notes["created"], notes["updated"]) == ("", None, None)
    assert rows["s1"]["error"] is None and rows["s1"]["title"] == "hello"

    assert run(config, "list") == 0
    table = capsys.readouterr().out
    assert "(unreadable: " in table and "not a dsh session file" in table


def test_only_unreadable_files_is_said_so(
    jsonl: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory, config = jsonl
    (directory / "s1.jsonl").unlink()
    (directory / "notes.jsonl").write_text('{"some": "other program"}\n')

    assert run(config, "show") == 2
    assert capsys.readouterr().err == (
        f"dsh: error: no stored session last ran in {tmp_path.resolve()} "
        "(the store holds no session it can read)\n"
    )


def test_a_renamed_session_file_says_how_to_reach_it_again(
    jsonl: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    directory, config = jsonl
    moved = directory / "my-nice-name.jsonl"
    (directory / "s1.jsonl").rename(moved)

    rows = listed(config, capsys)
    assert list(rows) == ["my-nice-name"]
    (directory / "old.jsonl").write_bytes(moved.read_bytes().replace(b'"s1"', b'"old"', 1))
    # a readable session first (these two were updated at once): --continue's error
    # names the first as the last one
    assert list(listed(config, capsys)) == ["old", "my-nice-name"]
    (directory / "old.jsonl").unlink()
    row = rows["my-nice-name"]
    assert row["error"] == (
        f"{moved}: the file name says session 'my-nice-name', its header says 's1'; "
        "rename it to s1.jsonl to reach it"
    )
    assert (row["title"], row["workspace"], row["turns"]) == ("hello", "/elsewhere", 1)
    # show says what list says (it said "the header names session 's1', not
    # 'my-nice-name'", with no way out), by the name or a prefix of it
    for given in ("my-nice-name", "my-nice"):
        assert run(config, "show", given) == 2
        assert capsys.readouterr().err == f"dsh: error: {row['error']}\n"
    assert run(config, "show", "s1") == 2
    assert "no stored session 's1'" in capsys.readouterr().err
    assert run(config, "delete", "s1") == 1
    assert capsys.readouterr().err == "dsh: error: no stored session 's1'\n"

    moved.rename(directory / "s1.jsonl")  # as the error says
    assert listed(config, capsys)["s1"]["error"] is None


def test_a_copy_of_a_session_file_says_it_is_one(
    jsonl: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    directory, config = jsonl
    copy = directory / "backup.jsonl"
    copy.write_bytes((directory / "s1.jsonl").read_bytes())

    rows = listed(config, capsys)
    assert rows["s1"]["error"] is None
    assert rows["backup"]["error"] == (
        f"{copy}: the file name says session 'backup', its header says 's1'; "
        "s1.jsonl holds that session (is this file a copy?)"
    )
    assert run(config, "show", "backup") == 2
    assert capsys.readouterr().err == f"dsh: error: {rows['backup']['error']}\n"
    assert run(config, "delete", "backup") == 0  # the copy can go
    assert capsys.readouterr().out == "deleted backup\n"
    assert list(listed(config, capsys)) == ["s1"]


def test_a_file_name_dsh_would_not_give_is_named_so(
    jsonl: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """``a b.jsonl`` holding session ``a b`` (dsh names it ``a%20b.jsonl``): listed as
    ``a b``, which no command reaches; the delete error names no other id."""
    directory, config = jsonl
    odd = directory / "a b.jsonl"
    text = (directory / "s1.jsonl").read_text().replace('"id":"s1"', '"id":"a b"', 1)
    os.unlink(directory / "s1.jsonl")
    odd.write_text(text)

    row = listed(config, capsys)["a b"]
    assert row["error"] == (
        f"{odd}: the file name is not the one dsh gives session 'a b'; "
        "rename it to a%20b.jsonl to reach it"
    )
    assert run(config, "delete", "a b") == 1
    assert capsys.readouterr().err == "dsh: error: no stored session 'a b'\n"


def test_continue_with_only_unreadable_files_names_none_of_them(
    jsonl: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from dsh.cli import main

    directory, config = jsonl
    (directory / "s1.jsonl").rename(directory / "my-nice-name.jsonl")
    with config.open("a") as file:
        file.write("models: {m: {provider: openai-compatible, base_url: 'http://127.0.0.1:9'")
        file.write(", model: m}}\nmodel: m\n")

    assert main(["-c", str(config), "run", "--continue", "hi"]) == 2
    err = capsys.readouterr().err
    assert "no stored session last ran in" in err
    assert "my-nice-name" not in err
    assert "the store holds no session it can read: `dsh sessions list` says why" in err


def test_the_store_marks_files_that_are_no_sessions(jsonl: tuple[Path, Path]) -> None:
    """``SessionHeader.foreign`` tells another program's file (no dsh header) from a
    session dsh cannot read (a newer format): ``--continue`` counts only the second as
    skipped, and no longer by the words of the error."""
    directory, _ = jsonl
    (directory / "notes.jsonl").write_text('{"some": "other program"}\n')
    newer = {"format": "dsh-session", "version": 99, "id": "newer", "created": 1.0}
    (directory / "newer.jsonl").write_text(json.dumps(newer) + "\n")
    backend = open_backend(PersistenceSettings(directory=directory))
    try:
        headers = {header.id: header for header in backend.headers()}
    finally:
        backend.close()
    assert headers["notes"].error and headers["notes"].foreign
    assert headers["newer"].error and not headers["newer"].foreign
    assert not headers["s1"].error and not headers["s1"].foreign
