"""accept-edits asks about files that run code later under other names than the fixed
list: a git directory a ``.git`` file points to (``git init --separate-git-dir``) or a
bare repository in the workspace, and the files Python runs at every start of a venv
in the workspace (``*.pth`` in site-packages, ``sitecustomize.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh_permissions
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh.testing import tool_calls as calls

pytestmark = pytest.mark.plugins("permissions")

SITE = ".venv/lib/python3.11/site-packages"


async def results(workspace: Path, *steps: tuple[str, dict[str, Any]]) -> list[str]:
    script = [*(calls((f"{name}#{n}", args)) for n, (name, args) in enumerate(steps)), text("done")]
    plugins = [("permissions", dsh_permissions)]
    options = {"model": "scripted", "permissions": {"mode": "accept-edits"}}
    async with scripted_harness(
        ScriptedModel(script), plugins=plugins, load_entry_points=False, workspace=workspace
    ) as harness:
        agent = await harness.agents.create("a", options=options)
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")
    return [e.data["content"] for e in events if e.type == "tool/result"]


def git_dir(path: Path) -> None:
    """What git looks for in a git directory (as ``git init`` leaves it)."""
    (path / "objects").mkdir(parents=True)
    (path / "refs" / "heads").mkdir(parents=True)
    (path / "hooks").mkdir()
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text("[core]\n\tbare = false\n")


async def test_a_git_dir_a_dot_git_file_names_is_asked_about(tmp_path: Path) -> None:
    git_dir(tmp_path / "meta")
    (tmp_path / ".git").write_text(f"gitdir: {tmp_path / 'meta'}\n")
    fsmonitor = "[core]\n\tfsmonitor = touch RAN; false"
    steps = [
        ("edit", {"path": "meta/config", "old": "[core]", "new": fsmonitor}),
        ("write", {"path": "meta/hooks/pre-commit", "content": "#!/bin/sh\n"}),
        ("write", {"path": "metadata/notes.txt", "content": "x"}),  # not a git dir
    ]
    config, hook, other = await results(tmp_path, *steps)
    assert config.startswith("Permission denied") and "a git directory" in config, config
    assert hook.startswith("Permission denied")
    assert other.startswith("created metadata/notes.txt")
    assert "fsmonitor" not in (tmp_path / "meta" / "config").read_text()
    assert not (tmp_path / "meta" / "hooks" / "pre-commit").exists()


async def test_a_bare_repository_is_asked_about(tmp_path: Path) -> None:
    git_dir(tmp_path / "remote.git")
    (hook,) = await results(
        tmp_path, ("write", {"path": "remote.git/hooks/post-receive", "content": "#!/bin/sh\n"})
    )
    assert hook.startswith("Permission denied")


@pytest.mark.parametrize(
    "last",
    [
        ("write", {"path": "foo/HEAD", "content": "ref: refs/heads/main\n"}),
        ("write", {"path": "foo/objects/x", "content": "x"}),
        ("write", {"path": "foo/refs/heads/main", "content": "0" * 40}),
        ("write", {"path": "foo/commondir", "content": "../.git\n"}),
    ],
    ids=["HEAD", "objects", "refs", "commondir"],
)
async def test_f11_the_write_that_makes_a_bare_repository_is_asked_about(
    tmp_path: Path, last: tuple[str, dict[str, Any]]
) -> None:
    """Permission review of session 34, F11: the guard saw a bare repository only once
    ``HEAD``, ``objects/`` and ``refs/`` were all there, so writing its hooks and
    config first and ``HEAD`` last was all allowed. The write that completes one is
    now asked about (git then runs foo/config's aliases and foo/hooks)."""
    parts = {
        "HEAD": ("write", {"path": "foo/HEAD", "content": "ref: refs/heads/main\n"}),
        "objects": ("write", {"path": "foo/objects/x", "content": "x"}),
        "refs": ("write", {"path": "foo/refs/heads/main", "content": "0" * 40}),
    }
    before = [
        ("write", {"path": "foo/hooks/pre-commit", "content": "#!/bin/sh\n"}),
        ("write", {"path": "foo/config", "content": "[alias]\n\tst = !touch RAN\n"}),
    ]
    if last[1]["path"] == "foo/commondir":  # objects and refs are the common dir's
        (tmp_path / ".git" / "objects").mkdir(parents=True)
        (tmp_path / ".git" / "refs").mkdir()
        before.append(parts["HEAD"])
    else:
        before += [step for step in parts.values() if step[1] != last[1]]
    found = await results(tmp_path, *before, last)
    assert all(r.startswith("created") for r in found[:-1]), found
    assert found[-1].startswith("Permission denied") and "git directory" in found[-1], found
    assert not (tmp_path / last[1]["path"]).exists()


async def test_f11_files_named_like_git_s_elsewhere_are_edits(tmp_path: Path) -> None:
    (tmp_path / "objects").mkdir()
    steps = [
        ("write", {"path": "src/HEAD", "content": "x"}),
        ("write", {"path": "docs/refs/index.md", "content": "x"}),
        ("write", {"path": "app/config", "content": "x"}),
    ]
    found = await results(tmp_path, *steps)
    assert all(r.startswith("created") for r in found), found


@pytest.mark.parametrize(
    ("path", "why"),
    [
        (f"{SITE}/zz_agent.pth", "start-up"),
        (f"{SITE}/sitecustomize.py", "start-up"),
        ("src/usercustomize.py", "start-up"),
        # permission re-review of session 32, F3: these were edits
        (f"{SITE}/sitecustomize/__init__.py", "start-up"),  # a package runs as well
        (f"{SITE}/usercustomize.pyc", "start-up"),  # a sourceless .pyc is imported
        (f"{SITE}/__pycache__/sitecustomize.cpython-311.pyc", "start-up"),
        (".venv/pyvenv.cfg", "configuration"),  # its home names the interpreter
        (".venv/bin/activate", "activation script"),
        (".venv/bin/activate.fish", "activation script"),
        ("venv/Scripts/Activate.ps1", "activation script"),
    ],
)
async def test_files_python_runs_at_start_are_asked_about(
    tmp_path: Path, path: str, why: str
) -> None:
    (tmp_path / SITE).mkdir(parents=True)
    (found,) = await results(tmp_path, ("write", {"path": path, "content": "import os\n"}))
    assert found.startswith("Permission denied") and why in found, found
    assert not (tmp_path / path).exists()


@pytest.mark.parametrize(
    "path",
    [
        # (a module in site-packages is asked about since permrev3 F6:
        # test_permissions_review_s35b)
        "docs/paths.pth",
        "src/site.py",
        "src/sitecustomize_notes.md",
        "src/activate.py",
        "docs/pyvenv.cfg.md",
    ],
)
async def test_other_python_files_are_still_edits(tmp_path: Path, path: str) -> None:
    (tmp_path / SITE).mkdir(parents=True)
    (found,) = await results(tmp_path, ("write", {"path": path, "content": "x = 1\n"}))
    assert found.startswith("created"), found
