"""``dsh -c <(cat dsh.yml) sessions ...``: a config file that can be read only once.

A process substitution is a pipe (``/dev/fd/63``): once read to its end, opening it again
reads nothing. Each ``sessions`` command must read the file once, and its harness run
with the settings read then (the store of ``persistence:``, the agents), not with the
defaults an empty second read gives.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from persistence_cli_support import run, store, two_sessions

from dsh.testing import ScriptedModel, text
from dsh_persistence import PersistenceSettings
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="no /dev/fd to name a pipe by"),
]


@contextmanager
def read_once(text: str) -> Iterator[Path]:
    """``<(printf %s TEXT)``: a path that reads ``text`` the first time it is opened and
    nothing after (its writer has closed)."""
    reader, writer = os.pipe()
    try:
        with os.fdopen(writer, "w") as feed:  # far below a pipe's capacity
            feed.write(text)
        yield Path(f"/dev/fd/{reader}")
    finally:
        os.close(reader)


def test_a_pipe_is_read_once_in_this_test() -> None:
    with read_once("model: x\n") as path:
        assert path.read_text() == "model: x\n"
        assert path.read_text() == ""


def test_resume_runs_with_the_settings_read_from_a_pipe(
    settings: PersistenceSettings,
    config: Path,
    scripted_cli: Callable[[ScriptedModel], ScriptedModel],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The persistence section finds the session, then the turn's harness stores it
    there and gives the agent the options of dsh.yml (read once, not twice)."""
    model = scripted_cli(ScriptedModel([text("from the pipe")]))
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("what is 1+2?")
    store(settings, "piped", log, {"agent": "main", "options": {"model": "scripted"}})
    yml = config.read_text() + "agents:\n  - id: main\n    system_prompt: Said in the pipe.\n"

    with read_once(yml) as path:
        assert run(path, "resume", "piped", "and now?") == 0
    captured = capsys.readouterr()
    assert captured.out == "from the pipe\n"
    assert "dsh: continuing session piped" in captured.err
    assert model.requests[0].system == "Said in the pipe."
    assert run(config, "show", "piped") == 0  # stored where the pipe's dsh.yml says
    assert "assistant: from the pipe" in capsys.readouterr().out


@pytest.mark.parametrize("action", ["list", "show", "delete"])
def test_the_other_actions_read_a_pipe_once(
    action: str, settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two_sessions(settings)
    args = {
        "list": ["list", "--json"],
        "show": ["show", "new"],
        "delete": ["delete", "old-session"],
    }

    with read_once(config.read_text()) as path:
        assert run(path, *args[action]) == 0
    out = capsys.readouterr().out
    if action == "list":
        assert [row["id"] for row in json.loads(out)] == ["new-session", "old-session"]
    elif action == "show":
        assert out.startswith("session new-session")
    else:
        assert out == "deleted old-session\n"
        assert run(config, "list", "--json") == 0
        assert [row["id"] for row in json.loads(capsys.readouterr().out)] == ["new-session"]
