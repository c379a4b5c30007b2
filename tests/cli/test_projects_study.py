"""One user, several projects, one default session store: `dsh run --continue` and `dsh
chat --continue` from each project, from a project's subdirectory, through a symlink,
in a directory whose name is not UTF-8, with `dsh sessions list` telling the projects
apart, on both backends."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from cli_support import contents, dsh, text_reply


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}


@pytest.mark.plugins("persistence")
def test_continue_in_a_subdirectory_names_the_projects_session_and_how_to_go_on_there(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """A subdirectory is a workspace of its own (as for dsh.yml): --continue there does
    not take the project's session (its tools would run in the subdirectory), but the
    error named the store's last session, another project's, and offered to continue
    *that* here. It names the project's, and `--cwd` to go on with it in the project."""
    server = model_server([text_reply("A."), text_reply("B."), text_reply("A again.")])
    model = f"openai-compatible:tiny@{server.url}"
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    sub = alpha / "src" / "deep"
    sub.mkdir(parents=True)
    beta.mkdir()
    first = dsh("-m", model, "run", "in alpha", env=env, cwd=alpha)
    assert first.returncode == 0, first.stderr
    assert dsh("-m", model, "run", "in beta, later", env=env, cwd=beta).returncode == 0
    (ours,) = [line.split()[-1] for line in first.stderr.splitlines() if "new session" in line]
    root, here = alpha.resolve(), sub.resolve()

    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=sub)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"dsh: error: --continue: no stored session last ran in {here} (the last one "
        f"of {root}, above it, is {ours}: `dsh --cwd {root} -m {model} run --continue 'go on'` "
        f"goes on with it there, --session {ours} here)\n"
    )  # with the -m given (a URL given so is not stored with the session), and the prompt
    chatted = dsh("-m", model, "chat", "--continue", env=env, cwd=sub, stdin="go on\n")
    assert chatted.returncode == 2
    assert f"`dsh --cwd {root} -m {model} chat --continue` goes on" in chatted.stderr
    assert len(server.bodies()) == 2  # neither asked the model

    # the way the error gives: the project's session, in the project
    done = dsh("--cwd", "../..", "-m", model, "run", "--continue", "go on", env=env, cwd=sub)
    assert done.returncode == 0, done.stderr
    assert contents(server.bodies()[2]) == ["in alpha", "A.", "go on"]


@pytest.mark.plugins("persistence")
def test_continue_in_a_directory_whose_name_is_not_utf8_takes_its_own_session(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """The store writes the workspace as UTF-8 (the bad byte as U+FFFD), and --continue
    compared it with the undecoded path: it never found the session started there."""
    try:
        os.mkdir(os.fsencode(tmp_path) + b"/caf\xe9")
    except OSError as error:  # a file system that takes only UTF-8 names
        pytest.skip(f"cannot make a directory named caf\\xe9 here: {error}")
    place = tmp_path / os.fsdecode(b"caf\xe9")
    server = model_server([text_reply("Noted."), text_reply("Again.")])
    model = f"openai-compatible:tiny@{server.url}"
    assert dsh("-m", model, "run", "hello", env=env, cwd=place).returncode == 0

    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=place)
    assert done.returncode == 0, done.stderr
    assert contents(server.bodies()[1]) == ["hello", "Noted.", "go on"]


@pytest.mark.plugins("persistence")
def test_projects_on_sqlite_through_a_symlink_and_a_list_that_tells_them_apart(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """Two projects on the SQLite backend (one database, the default place): a project
    reached through a link is the same workspace, and `dsh sessions list` (which had
    no workspace column) says which project each session is from, under ~ as ~/..."""
    server = model_server([text_reply("Web."), text_reply("Tools."), text_reply("Web again.")])
    model = f"openai-compatible:tiny@{server.url}"
    env = {**env, "HOME": str(tmp_path)}
    web, tools = tmp_path / "web", tmp_path / "tools"
    for project in (web, tools):
        project.mkdir()
        (project / "dsh.yml").write_text("persistence: {backend: sqlite}\n")
    (tmp_path / "web-link").symlink_to(web)
    assert dsh("-m", model, "run", "in web", env=env, cwd=tmp_path / "web-link").returncode == 0
    assert dsh("-m", model, "run", "in tools", env=env, cwd=tools).returncode == 0

    done = dsh("-m", model, "run", "--continue", "go on", env=env, cwd=web)
    assert done.returncode == 0, done.stderr
    assert contents(server.bodies()[2]) == ["in web", "Web.", "go on"]
    listed = dsh("sessions", "list", env=env, cwd=tools)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0] == ["ID", "UPDATED", "TURNS", "WORKSPACE", "TITLE"]
    assert [(row[4], row[5:]) for row in rows[1:]] == [
        ("~/web", ["in", "web"]),
        ("~/tools", ["in", "tools"]),
    ]


@pytest.mark.plugins("persistence")
@pytest.mark.parametrize("backend", ["jsonl", "sqlite"])
def test_continue_follows_a_session_moved_with_session_id(
    model_server: Any, env: dict[str, str], tmp_path: Path, backend: str
) -> None:
    """A session's workspace was where it was started (the JSONL header's cwd, the
    SQLite row's): after `dsh run --session ID` moved it to another directory,
    `--continue` there refused it and `--continue` where it started still took it,
    though its last turn ran elsewhere. Now both go by where its last turn ran, and
    `dsh sessions list` shows that workspace."""
    server = model_server([text_reply("One."), text_reply("Two."), text_reply("Three.")])
    model = f"openai-compatible:tiny@{server.url}"
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence: {{backend: {backend}}}\n")
    env = {**env, "HOME": str(tmp_path)}
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    run = ("-c", str(config), "-m", model, "run")
    started = dsh(*run, "hello", env=env, cwd=first)
    assert started.returncode == 0, started.stderr
    (ours,) = [line.split()[-1] for line in started.stderr.splitlines() if "new session" in line]
    moved = dsh(*run, "--session", ours, "here now", env=env, cwd=second)
    assert moved.returncode == 0, moved.stderr

    refused = dsh(*run, "--continue", "go on", env=env, cwd=first)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        f"dsh: error: --continue: no stored session last ran in {first.resolve()} (the "
        f"last one, {ours}, is from {second.resolve()}; --session {ours} continues it "
        "here)\n"
    )
    listed = dsh("-c", str(config), "sessions", "list", env=env, cwd=first)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert [(row[0], row[4]) for row in rows[1:]] == [(ours, "~/second")]
    done = dsh(*run, "--continue", "go on", env=env, cwd=second)
    assert done.returncode == 0, done.stderr
    assert contents(server.bodies()[2]) == ["hello", "One.", "here now", "Two.", "go on"]
