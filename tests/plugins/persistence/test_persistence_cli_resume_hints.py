"""The commands ``dsh sessions resume`` suggests paste as a resume of the session: an id
beginning with ``-`` comes after ``--`` (``sessions resume -dash "list the files"`` was
an argparse error: ``-d`` taken for an option), and an id that names no stored session
is said before the prompt is read, rather than a suggestion that then fails with
``no stored session``."""

from __future__ import annotations

import io
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from persistence_cli_support import run, store

from dsh.cli import main
from dsh.testing import ScriptedModel, text
from dsh_persistence import PersistenceSettings
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


@pytest.fixture
def model(scripted_cli: Callable[[ScriptedModel], ScriptedModel]) -> ScriptedModel:
    return scripted_cli(ScriptedModel([text("done")]))


def _stored(settings: PersistenceSettings, session_id: str) -> None:
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("hello", calls=())
    store(settings, session_id, log)


def _suggested(err: str, before: str, after: str) -> list[str]:
    """The words of the command ``err`` suggests between ``before`` and ``after``."""
    start = err.index(before) + len(before)
    return shlex.split(err[start : err.index(after, start)])


def test_the_empty_prompt_hint_for_an_id_beginning_with_a_dash_pastes(
    settings: PersistenceSettings,
    config: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _stored(settings, "-dash")
    assert run(config, "resume", "--", "-dash", "", model="scripted") == 2
    err = capsys.readouterr().err
    assert 'sessions resume -- -dash "list the files")' in err, err
    words = _suggested(err, "give the text to send (", ")\n")
    assert words[:6] == ["dsh", "-c", str(config), "-m", "scripted", "sessions"]
    assert main(words[1:]) == 0  # pasted: a resume of the session, that prompt sent
    assert model.requests[-1].messages[-1].content == "list the files"


def test_the_no_prompt_hints_for_an_id_beginning_with_a_dash_paste(
    settings: PersistenceSettings,
    config: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    _stored(settings, "-dash")
    monkeypatch.setattr("sys.stdin", Terminal())
    assert run(config, "resume", "--", "-dash") == 2
    err = capsys.readouterr().err
    said = f"resume needs a prompt: dsh -c {config} sessions resume -- -dash 'what next?'"
    assert said in err
    assert f"dsh -c {config} chat --session=-dash" in err


def test_an_id_that_names_no_session_is_said_before_the_prompt_is_read(
    settings: PersistenceSettings,
    config: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _stored(settings, "new-session")
    assert run(config, "resume", "nosuch", "") == 2
    err = capsys.readouterr().err
    assert err == "dsh: error: no stored session 'nosuch' (`dsh sessions list` shows them)\n"

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal())
    assert run(config, "resume", "nosuch") == 2
    assert "no stored session 'nosuch'" in capsys.readouterr().err


def test_resume_help_says_what_no_prompt_does(capsys: pytest.CaptureFixture[str]) -> None:
    """The help said the prompt defaulted to stdin, but at a terminal no prompt is
    refused (``resume needs a prompt``): the help says so."""
    with pytest.raises(SystemExit) as exited:
        main(["sessions", "resume", "--help"])
    assert exited.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "default: stdin" not in shown
    said = "none given: the text piped in on stdin (at a terminal, a prompt is needed)"
    assert said in shown, shown


def test_resume_names_the_plugins_not_loaded_for_the_files_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``model: try-ls`` with a plugin left out (``-p no:compaction``): the config check
    resume makes before its turn says what ``dsh run`` says of it. Needs dsh-compaction
    installed: with dsh-persistence alone no installed plugin is left out."""
    pytest.importorskip("dsh_compaction", reason="dsh-compaction is not installed")
    config = tmp_path / "dsh.yml"
    config.write_text("model: try-ls\n")
    argv = ["-p", "no:compaction", "-c", str(config), "sessions", "resume", "s", "hi"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "model: unknown model 'try-ls'" in err, err
    assert "; if a plugin serves this model, it is not loaded (installed, not loaded: " in err
