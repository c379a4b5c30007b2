"""An "always" answer holds in the workspace it was given in. A command's text is
relative to its workspace (``./deploy.sh`` is another program in another directory), so
a session continued elsewhere (``dsh run --session ID`` in another directory) asks
again; continued in the same workspace, it does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from permissions_util import Asker

import dsh_permissions
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text
from dsh.testing import tool_calls as calls
from dsh_permissions import PermissionAnswer

pytestmark = pytest.mark.plugins("permissions")

DEPLOY = {"command": "./deploy.sh"}


def workspace(path: Path, name: str) -> Path:
    path.mkdir()
    script = path / "deploy.sh"
    script.write_text(f"#!/bin/sh\necho deployed {name}\n")
    script.chmod(0o755)
    return path


async def deploy(
    store: InMemoryPersistence, where: Path, asker: Asker, session: str | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """One turn running ``./deploy.sh`` in ``where``: a new session, or ``session``
    continued. The session's id and the turn's decisions."""
    script = [calls(("bash#1", DEPLOY)), text("done")]
    plugins = [("permissions", dsh_permissions), ("asker", asker), ("store", store)]
    options = {"model": "scripted", "permissions": {"mode": "default"}}
    async with scripted_harness(
        ScriptedModel(script), plugins=plugins, load_entry_points=False, workspace=where
    ) as harness:
        if session is None:
            agent = await harness.agents.create("a", options=options)
        else:
            agent = await harness.agents.resume("a", session, options=options)
        with anyio.fail_after(10):
            events = await run_turn(agent, "deploy")
    return agent.session.id, [e.data for e in events if e.type == "permission/decision"]


async def test_an_always_answer_does_not_follow_the_session_to_another_workspace(
    tmp_path: Path,
) -> None:
    first, other = workspace(tmp_path / "a", "A"), workspace(tmp_path / "b", "B")
    store = InMemoryPersistence()
    asker = Asker(PermissionAnswer.always())
    session, (given,) = await deploy(store, first, asker)
    assert given["answer"] == "always"
    (remembered,) = given["remember"]
    assert remembered["value"] == "./deploy.sh" and remembered["workspace"] == str(first)

    refusing = Asker(PermissionAnswer.deny("not here"))
    _, (elsewhere,) = await deploy(store, other, refusing, session)
    assert elsewhere["decision"] == "deny", elsewhere["reason"]
    assert len(refusing.requests) == 1  # asked again, not "allowed for this session"

    _, (back,) = await deploy(store, first, refusing, session)
    assert back["decision"] == "allow" and "for this session" in back["reason"]
    assert len(refusing.requests) == 1


async def test_a_logged_grant_that_names_no_workspace_is_asked_about_again(
    tmp_path: Path,
) -> None:
    # a log written before grants held per workspace: its entries name none
    first = workspace(tmp_path / "a", "A")
    store = InMemoryPersistence()
    session, _ = await deploy(store, first, Asker(PermissionAnswer.always()))
    for event in store.stored[session].events:
        for entry in event.data.get("remember") or ():
            entry.pop("workspace", None)
    refusing = Asker(PermissionAnswer.deny("no"))
    _, (again,) = await deploy(store, first, refusing, session)
    assert again["decision"] == "deny" and len(refusing.requests) == 1
