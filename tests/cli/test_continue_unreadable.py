"""`dsh run --continue` and a session the store cannot read: one written by a newer dsh
(header ``"version": 2``) says neither when nor where it last ran, so it may be this
workspace's newest. ``--continue`` took the last readable one without a word; it now
says on stderr how many it skipped, and where to see why (docs/cli.md)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply

pytestmark = pytest.mark.plugins("persistence")


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}


def sessions_made(
    model_server: Any, env: dict[str, str], cwd: Path, *prompts: str, replies: int
) -> tuple[Any, str, Path, list[str]]:
    """A model server with ``replies`` answers and one ``dsh run`` in ``cwd`` for each of
    ``prompts``: the server, the model naming it, the store, and the session each run
    made (one each), in order."""
    server = model_server([text_reply(f"Answer {n}.") for n in range(replies)])
    model = f"openai-compatible:tiny@{server.url}"
    store = Path(env["DSH_PERSISTENCE_DIR"])
    made: list[str] = []
    for prompt in prompts:
        assert dsh("-m", model, "run", prompt, env=env, cwd=cwd).returncode == 0
        (new,) = {path.stem for path in store.glob("*.jsonl")} - set(made)
        made.append(new)
    return server, model, store, made


def newer_format(path: Path) -> None:
    """Make the session file ``path`` one a newer dsh wrote: header version 2."""
    header, rest = path.read_bytes().split(b"\n", 1)
    fields = json.loads(header)
    fields["version"] = 2
    path.write_bytes(json.dumps(fields).encode() + b"\n" + rest)


def test_continue_says_it_skipped_an_unreadable_session(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    _, model, store, (older, newer) = sessions_made(
        model_server, env, tmp_path, "older", "newer", replies=4
    )

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
    _, model, store, _ = sessions_made(model_server, env, tmp_path, "first", replies=2)
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
    saying only why. Now a line after that names the session before it (``--session``,
    with the prompt given: pasted without it, ``run`` refused it) and, gently (a newer
    dsh may have written it), ``dsh sessions delete``."""
    _, model, store, (older, newer) = sessions_made(
        model_server, env, tmp_path, "older", "newer", replies=3
    )
    damaged_mid_log(store / f"{newer}.jsonl")

    done = dsh("-m", model, "run", "--continue", "go on, it's", env=env, cwd=tmp_path)
    assert done.returncode == 2
    first, second = done.stderr.splitlines()[-2:]
    assert first.startswith(f"dsh: error: {store / newer}.jsonl:3: ")  # as before
    before = f"dsh -m {model} run --session {older} 'go on, it'\"'\"'s'"
    assert second == (
        f"dsh: --continue: session {newer} is damaged: `{before}` goes on with the one "
        f"before it here; if you no longer need it (a newer dsh may read what this one "
        f"cannot), `dsh sessions delete {newer}` deletes it"
    )
    pasted = dsh(*shlex.split(before)[1:], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert pasted.returncode == 0, pasted.stderr
    assert f"dsh: continuing session {older} " in pasted.stderr

    (store / f"{older}.jsonl").unlink()  # no other session here: how to pick one
    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=tmp_path)
    assert done.stderr.splitlines()[-1] == (
        f"dsh: --continue: session {newer} is damaged: --session ID goes on with another "
        f"(`dsh sessions list` lists them); if you no longer need it (a newer dsh may read "
        f"what this one cannot), `dsh sessions delete {newer}` deletes it"
    )


def test_session_id_on_a_damaged_session_says_how_to_go_on(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """``--session ID`` of a damaged session said only why it failed: now, as
    ``--continue`` does, a line after that says how to go on (a new session, without
    ``--session``) and, gently, ``dsh sessions delete`` (of the whole id a prefix named)."""
    server = model_server([text_reply("Answer.")])
    model = f"openai-compatible:tiny@{server.url}"
    store = Path(env["DSH_PERSISTENCE_DIR"])
    assert dsh("-m", model, "run", "first", env=env, cwd=tmp_path).returncode == 0
    (damaged,) = [path.stem for path in store.glob("*.jsonl")]
    damaged_mid_log(store / f"{damaged}.jsonl")

    prefix = damaged[:-2]
    done = dsh("-m", model, "run", "--session", prefix, "go on", env=env, cwd=tmp_path)
    assert done.returncode == 2
    first, second = done.stderr.splitlines()[-2:]
    assert first.startswith(f"dsh: error: {store / damaged}.jsonl:3: ")  # as before
    new = f"dsh -m {model} run 'go on'"
    assert second == (
        f"dsh: --session: session {damaged} is damaged: `{new}` starts a new session "
        f"instead; if you no longer need it (a newer dsh may read what this one cannot), "
        f"`dsh sessions delete {damaged}` deletes it"
    )
    # dsh sessions resume ID is dsh run --session ID: its prompt may have been piped in
    done = dsh("-m", model, "sessions", "resume", prefix, "go on", env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith(
        f"dsh: sessions resume: session {damaged} is damaged: `dsh -m {model} run PROMPT` starts"
    )
    assert len(server.bodies()) == 1  # the model was not asked


def test_a_prompt_read_from_stdin_is_a_placeholder(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """The text piped in is not repeated (nor a long or many-line prompt): ``PROMPT``."""
    _, model, store, (older, newer) = sessions_made(
        model_server, env, tmp_path, "older", "newer", replies=2
    )
    damaged_mid_log(store / f"{newer}.jsonl")
    for words, stdin in ((["sum", "this", "-"], "piped\n"), (["a\nb"], None), (["x" * 201], None)):
        done = dsh("-m", model, "run", "--continue", *words, env=env, cwd=tmp_path, stdin=stdin)
        assert done.returncode == 2
        assert f"`dsh -m {model} run --session {older} PROMPT` goes on" in done.stderr


def reason_unknown(path: Path) -> None:
    """Make the session file ``path`` end its turn for a reason a newer dsh may give."""
    path.write_bytes(path.read_bytes().replace(b'"completed"', b'"budget_exhausted"'))


def test_continue_suggests_the_last_session_before_it_that_loads(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """The session before the damaged one may be damaged too: it was suggested all the
    same, and pasted, failed with no hint. The few before it are loaded in turn."""
    server, model, store, (first, second, third) = sessions_made(
        model_server, env, tmp_path, "first", "second", "third", replies=3
    )
    damaged_mid_log(store / f"{second}.jsonl")
    reason_unknown(store / f"{third}.jsonl")  # a newer dsh's, to this one damaged

    done = dsh("-m", model, "run", "--continue", "on", env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown reason 'budget_exhausted'" in done.stderr
    assert (
        f"`dsh -m {model} run --session {first} on` goes on with the last one before it "
        "that loads here;" in done.stderr
    )

    damaged_mid_log(store / f"{first}.jsonl")
    done = dsh("-m", model, "run", "--continue", "on", env=env, cwd=tmp_path)
    assert done.stderr.splitlines()[-1].startswith(
        f"dsh: --continue: session {third} is damaged: --session ID goes on with another "
        "(the 2 before it here are damaged too) (`dsh sessions list` lists them);"
    )
    assert len(server.bodies()) == 3  # the model was never asked


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
