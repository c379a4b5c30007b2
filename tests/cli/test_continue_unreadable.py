"""`dsh run --continue` and a session the store cannot read: one written by a newer dsh
(header ``"version": 2``) says neither when nor where it last ran, so it may be this
workspace's newest. ``--continue`` took the last readable one without a word; it now
says on stderr how many it skipped, and where to see why (docs/cli.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import text_reply

DSH = [sys.executable, "-m", "dsh.cli"]

pytestmark = pytest.mark.plugins("persistence")


def dsh(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*DSH, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}


def newer_format(path: Path) -> None:
    """Make the session file ``path`` one a newer dsh wrote: header version 2."""
    header, rest = path.read_bytes().split(b"\n", 1)
    fields = json.loads(header)
    fields["version"] = 2
    path.write_bytes(json.dumps(fields).encode() + b"\n" + rest)


def test_continue_says_it_skipped_an_unreadable_session(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply(f"Answer {n}.") for n in range(4)])
    model = f"openai-compatible:tiny@{server.url}"
    store = Path(env["DSH_PERSISTENCE_DIR"])
    assert dsh("-m", model, "run", "older", env=env, cwd=tmp_path).returncode == 0
    (older,) = [path.stem for path in store.glob("*.jsonl")]
    assert dsh("-m", model, "run", "newer", env=env, cwd=tmp_path).returncode == 0
    (newer,) = {path.stem for path in store.glob("*.jsonl")} - {older}

    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "unreadable" not in done.stderr
    assert f"dsh: continuing session {newer} " in done.stderr

    newer_format(store / f"{newer}.jsonl")
    done = dsh("-m", model, "run", "--continue", "and on", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "dsh: --continue: skipped 1 unreadable session: `dsh sessions list` says why\n"
        in done.stderr
    )
    assert f"dsh: continuing session {older} " in done.stderr


def test_continue_does_not_count_files_that_are_no_sessions(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """A ``.jsonl`` file without a dsh header (``train1.jsonl``, in a store of
    ``directory: .``) is another program's, not an unreadable session: it was counted
    as one on every ``--continue``."""
    server = model_server([text_reply(f"Answer {n}.") for n in range(2)])
    model = f"openai-compatible:tiny@{server.url}"
    store = Path(env["DSH_PERSISTENCE_DIR"])
    assert dsh("-m", model, "run", "first", env=env, cwd=tmp_path).returncode == 0
    (store / "train1.jsonl").write_text('{"prompt": "a", "completion": "b"}\n')
    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "unreadable" not in done.stderr and "dsh: continuing session " in done.stderr


def damaged_mid_log(path: Path) -> None:
    """Make a line in the middle of the session file ``path`` unreadable: its header
    (and so ``dsh sessions list``) is fine, its load a ``SessionCorruptError``."""
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = b"{not json\n"
    path.write_bytes(b"".join(lines))


def test_continue_on_a_damaged_session_says_how_to_go_on(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """The newest session of the workspace, damaged: every ``--continue`` failed on it,
    saying only why. Now a line after that names the session before it (``--session``)
    and ``dsh sessions delete``."""
    server = model_server([text_reply(f"Answer {n}.") for n in range(3)])
    model = f"openai-compatible:tiny@{server.url}"
    store = Path(env["DSH_PERSISTENCE_DIR"])
    assert dsh("-m", model, "run", "older", env=env, cwd=tmp_path).returncode == 0
    (older,) = [path.stem for path in store.glob("*.jsonl")]
    assert dsh("-m", model, "run", "newer", env=env, cwd=tmp_path).returncode == 0
    (newer,) = {path.stem for path in store.glob("*.jsonl")} - {older}
    damaged_mid_log(store / f"{newer}.jsonl")

    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=tmp_path)
    assert done.returncode == 2
    first, second = done.stderr.splitlines()[-2:]
    assert first.startswith(f"dsh: error: {store / newer}.jsonl:3: ")  # as before
    assert second == (
        f"dsh: --continue: session {newer} is damaged: `dsh -m {model} run --session "
        f"{older}` goes on with the one before it here; `dsh sessions delete {newer}` "
        "deletes it"
    )

    (store / f"{older}.jsonl").unlink()  # no other session here: how to pick one
    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=tmp_path)
    assert done.stderr.splitlines()[-1] == (
        f"dsh: --continue: session {newer} is damaged: --session ID goes on with another "
        f"(`dsh sessions list` lists them); `dsh sessions delete {newer}` deletes it"
    )


def test_damage_is_told_from_other_load_failures() -> None:
    """What ``--continue`` adds its line to: a store's ``SessionCorruptError`` and a log
    that breaks the invariants (``sound``), not any failure to load."""
    from dsh import DshError, SessionInUseError
    from dsh._resume import damaged, sound
    from dsh.persistence import StoredSession
    from dsh_persistence import SessionCorruptError
    from dsh_persistence.testing import LogBuilder

    log = LogBuilder()
    log.turn("one")
    log.turn("two")
    holed = [*log.events[:3], *log.events[4:]]
    with pytest.raises(DshError) as broken:
        sound(StoredSession("s", 1.0, holed))
    assert damaged(broken.value)
    assert damaged(SessionCorruptError("s.jsonl:3: not a JSON event"))
    assert not damaged(DshError("cannot resume session 's': it is not stored"))
    assert not damaged(SessionInUseError("session 's' is in use"))
