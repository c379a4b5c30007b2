"""One store, several projects, on both backends: sessions stored by a harness in Python
(`Harness(workspace=...)`) are found by the workspace `dsh run --continue`, `dsh
sessions show` and `dsh sessions list --here` run in, whatever the path looks like (a
symlink, bytes that are not UTF-8), and a project's subdirectory is told where the
project's session is. Every test runs once per backend (the ``settings`` fixture)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from dsh.cli import main
from dsh.persistence import SessionHeader, last_in
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import PersistencePlugin, PersistenceSettings

pytestmark = pytest.mark.plugins("persistence")


async def store_in(settings: PersistenceSettings, workspace: Path, prompt: str) -> str:
    """A session with one turn, stored by a harness working in ``workspace``; its id."""
    async with scripted_harness(
        ScriptedModel([text("noted")]),
        plugins=[("persistence", PersistencePlugin(settings))],
        load_entry_points=False,
        workspace=workspace,
    ) as harness:
        agent = await harness.agents.create("main", options={"model": "scripted"})
        await run_turn(agent, prompt)
        return agent.session.id


async def headers(settings: PersistenceSettings) -> list[SessionHeader]:
    async with scripted_harness(
        ScriptedModel([]),
        plugins=[("persistence", PersistencePlugin(settings))],
        load_entry_points=False,
    ) as harness:
        service = await harness.relay.session_persistence()
        assert service is not None
        return await service.list()


def undecodable(parent: Path) -> Path:
    """A directory whose name is not UTF-8 (``caf\\xe9``), as ``os.fsdecode`` gives it."""
    try:
        os.mkdir(os.fsencode(parent) + b"/caf\xe9")
    except OSError as error:  # a file system that takes only UTF-8 names
        pytest.skip(f"cannot make a directory named caf\\xe9 here: {error}")
    return parent / os.fsdecode(b"caf\xe9")


def test_a_workspace_whose_name_is_not_utf8_finds_its_own_sessions(
    settings: PersistenceSettings, tmp_path: Path
) -> None:
    """The store writes the directory as UTF-8 (U+FFFD for the bad byte): --continue
    there found nothing, and named the session stored there as being "from" elsewhere."""
    place = undecodable(tmp_path)
    session_id = anyio.run(store_in, settings, place, "in a latin-1 directory")
    stored = anyio.run(headers, settings)
    assert [h.workspace for h in stored] == [str(tmp_path.resolve() / "caf\ufffd")]
    here = last_in(stored, str(place.resolve()))
    assert here is not None and here.id == session_id


def test_a_symlinked_project_and_its_subdirectory(
    settings: PersistenceSettings, tmp_path: Path
) -> None:
    """A harness given the project through a link stores the real directory; a
    subdirectory is not the project (no session of its own), but last_above names the
    project's newest session, not a newer one of another project."""
    from dsh.persistence import last_above  # new with this test

    project, other = tmp_path / "project", tmp_path / "other"
    (project / "src").mkdir(parents=True)
    other.mkdir()
    (tmp_path / "link").symlink_to(project)
    ours = anyio.run(store_in, settings, tmp_path / "link", "in the project")
    anyio.run(store_in, settings, other, "in another project, later")
    stored = anyio.run(headers, settings)

    mine = last_in(stored, str(project.resolve()))
    assert mine is not None and mine.id == ours
    sub = str(project.resolve() / "src")
    assert last_in(stored, sub) is None
    above = last_above(stored, sub)
    assert above is not None and above.id == ours
    assert last_above(stored, str(project.resolve())) is None  # itself is not above it


def test_sessions_show_in_a_subdirectory_names_the_projects_session(
    settings: PersistenceSettings, config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    (project / "src").mkdir(parents=True)
    other.mkdir()
    ours = anyio.run(store_in, settings, project, "in the project")
    theirs = anyio.run(store_in, settings, other, "in another project, later")
    sub = project.resolve() / "src"

    assert main(["-c", str(config), "--cwd", str(sub), "sessions", "show"]) == 2
    assert capsys.readouterr().err == (
        f"dsh: error: no stored session last ran in {sub} (the last one of "
        f"{project.resolve()}, above it, is {ours}: give its id, or run `dsh --cwd "
        f"{project.resolve()} sessions show`)\n"
    )
    # --here lists what --continue chooses from; the list says where each one is from
    assert main(["-c", str(config), "--cwd", str(other), "sessions", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["id"], r["workspace"]) for r in rows] == [
        (theirs, str(other.resolve())),
        (ours, str(project.resolve())),
    ]
    assert main(["-c", str(config), "--cwd", str(project), "sessions", "list", "--here"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "UPDATED", "TURNS", "WORKSPACE", "TITLE"]
    assert [line.split()[0] for line in lines[1:]] == [ours]
    assert main(["-c", str(config), "--cwd", str(sub), "sessions", "list", "--here"]) == 0
    assert capsys.readouterr().err.endswith(f" that last ran in {sub}\n")
