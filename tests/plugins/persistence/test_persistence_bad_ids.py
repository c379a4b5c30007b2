"""Session and agent ids no store can hold, said in dsh's words: ``dsh sessions delete``
of an id that is not text (a non-UTF-8 argument: ``'\\udcff'``) failed as ``plugin
'persistence' failed in command 'sessions': UnicodeEncodeError`` while show said no
stored session; an ``agents[].id`` too long for a JSONL file name was refused only at
the first claim, naming no file, line or key."""

from __future__ import annotations

from pathlib import Path

import pytest
from persistence_cli_support import run, store

from dsh.cli import main
from dsh_persistence import PersistenceError, PersistenceSettings
from dsh_persistence._files import file_name
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def test_deleting_an_id_that_is_not_text_says_no_stored_session(
    config: Path, settings: PersistenceSettings, capsys: pytest.CaptureFixture[str]
) -> None:
    log = LogBuilder()
    log.turn("hello", calls=())
    store(settings, "kept", log)
    assert run(config, "delete", "\udcff") == 1
    assert capsys.readouterr().err == "dsh: error: no stored session '\\udcff'\n"
    assert run(config, "list") == 0
    assert "kept" in capsys.readouterr().out


def yml(tmp_path: Path, agent_id: str, backend: str) -> Path:
    path = tmp_path / "dsh.yml"
    path.write_text(
        f"persistence:\n  backend: {backend}\n  directory: {tmp_path / 's'}\n"
        f"agents:\n  - id: short\n  - id: {agent_id}\n"
    )
    return path


def test_an_agent_id_too_long_for_a_jsonl_file_name_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    path = yml(tmp_path, "a" * 300, "jsonl")
    assert main(["-c", str(path), "config", "check"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:6:5: agents[1].id: too long for a session file name of the jsonl " in err
    assert "(300 bytes once encoded; at most 199, as its sessions are <id>-session-" in err
    assert "a" * 61 not in err  # the id is not quoted whole


@pytest.mark.parametrize(("agent_id", "backend"), [("a" * 199, "jsonl"), ("a" * 300, "sqlite")])
def test_an_agent_id_the_backend_can_store_is_taken(
    agent_id: str,
    backend: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    assert main(["-c", str(yml(tmp_path, agent_id, backend)), "config", "check"]) == 0, (
        capsys.readouterr().err
    )


def test_a_long_or_not_text_session_id_is_refused_quoted_cut() -> None:
    with pytest.raises(PersistenceError, match=r"^session id 'a+'\.\.\. \(400 characters\) cannot"):
        file_name("a" * 400)
    with pytest.raises(PersistenceError, match=r"^session id 'x\\udcff' .* it is not valid text"):
        file_name("x\udcff")
