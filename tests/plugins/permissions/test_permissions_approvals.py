"""Approvals: "allow always" answers are logged, apply for the rest of the session,
and survive resume — because they are folded from the session log, nothing else."""

from __future__ import annotations

from typing import Any
from unittest.mock import ANY

import anyio
import pytest
from permissions_util import Asker, CorpusTools

import dsh_permissions
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text
from dsh.testing import tool_calls as calls
from dsh_permissions import PermissionAnswer

pytestmark = pytest.mark.plugins("permissions")

OPTIONS: dict[str, Any] = {"model": "scripted", "permissions": {"mode": "default"}}


def decisions(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type == "permission/decision"]


async def test_always_is_remembered_for_the_session_and_logged():
    asker = Asker(PermissionAnswer.always())
    model = ScriptedModel(
        [
            calls(("bash#b1", {"command": "make test"})),
            calls(("bash#b2", {"command": "make test"}), ("bash#b3", {"command": "make lint"})),
            text("ok"),
        ]
    )
    tools = CorpusTools()
    plugins = [("permissions", dsh_permissions), ("tools", tools), ("asker", asker)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options=OPTIONS)
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")

    assert tools.ran == ["bash make test", "bash make test", "bash make lint"]
    assert [r.call_id for r in asker.requests] == ["b1", "b3"]  # b2 was remembered
    first, second, third = decisions(events)
    assert first["answer"] == "always" and first["front_end"] == "asker"
    (made,) = first["remember"]  # held in the workspace it was given in
    assert made == {"tool": "bash", "kind": "command", "value": "make test", "workspace": ANY}
    assert made["workspace"].startswith("/")
    assert (second["decision"], second["answer"]) == ("allow", None)
    assert second["parts"][0]["by"] == "grant"
    assert third["remember"] == [{**made, "value": "make lint"}]


async def test_always_on_a_chain_remembers_only_what_was_asked():
    asker = Asker(PermissionAnswer.always())
    model = ScriptedModel(
        [
            calls(("bash#b1", {"command": "git status && make"})),
            calls(("bash#b2", {"command": "make && git push"})),
            text("ok"),
        ]
    )
    plugins = [("permissions", dsh_permissions), ("tools", CorpusTools()), ("asker", asker)]
    options = {"model": "scripted", "permissions": {"allow": ["bash(git status*)"]}}
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options=options)
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")

    assert [r.subjects for r in asker.requests] == [
        (("command", "make"),),
        (("command", "git push"),),
    ]
    assert [d["remember"][0]["value"] for d in decisions(events)] == ["make", "git push"]


async def test_nothing_is_remembered_for_what_cannot_be_checked():
    asker = Asker(PermissionAnswer.always())
    model = ScriptedModel(
        [
            calls(("bash#b1", {"command": "echo $HOME"})),
            calls(("bash#b2", {"command": "echo $HOME"})),
            text("ok"),
        ]
    )
    plugins = [("permissions", dsh_permissions), ("tools", CorpusTools()), ("asker", asker)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options=OPTIONS)
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")

    assert len(asker.requests) == 2
    assert asker.requests[0].remember == ()
    assert [d["remember"] for d in decisions(events)] == [[], []]


async def test_always_answers_survive_resume():
    store = InMemoryPersistence()
    asker = Asker(PermissionAnswer.always())
    first = ScriptedModel([calls(("write#w1", {"path": "notes.txt"})), text("written")])
    plugins = [("permissions", dsh_permissions), ("tools", CorpusTools()), ("asker", asker)]
    async with scripted_harness(
        first, plugins=[*plugins, ("store", store)], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        with anyio.fail_after(10):
            await run_turn(agent, "write it")
        session_id = agent.session.id
    assert len(asker.requests) == 1

    # A later process: no front end at all, so anything asked would be denied.
    tools = CorpusTools()
    later = [("permissions", dsh_permissions), ("tools", tools), ("store", store)]
    second = ScriptedModel([calls(("write#w2", {"path": "notes.txt"})), text("again")])
    async with scripted_harness(second, plugins=later, load_entry_points=False) as h:
        agent = await h.agents.resume("a", session_id, options=OPTIONS)
        with anyio.fail_after(10):
            events = await run_turn(agent, "write it again")

    assert tools.ran == ["write notes.txt"]
    (decision,) = decisions(events)
    assert decision["decision"] == "allow" and decision["parts"][0]["by"] == "grant"


async def test_a_new_session_starts_without_the_grants():
    store = InMemoryPersistence()
    asker = Asker(PermissionAnswer.always())
    first = ScriptedModel([calls(("write#w1", {"path": "notes.txt"})), text("written")])
    plugins = [("permissions", dsh_permissions), ("tools", CorpusTools()), ("asker", asker)]
    async with scripted_harness(
        first, plugins=[*plugins, ("store", store)], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        with anyio.fail_after(10):
            await run_turn(agent, "write it")

    tools = CorpusTools()
    second = ScriptedModel([calls(("write#w2", {"path": "notes.txt"})), text("refused")])
    later = [("permissions", dsh_permissions), ("tools", tools)]
    async with scripted_harness(second, plugins=later, load_entry_points=False) as h:
        agent = await h.agents.create("b", options=OPTIONS)
        with anyio.fail_after(10):
            events = await run_turn(agent, "write it")

    assert tools.ran == []
    (decision,) = decisions(events)
    assert decision["decision"] == "deny"


async def test_a_grant_never_overrides_a_deny_rule_added_later():
    asker = Asker(PermissionAnswer.always())
    model = ScriptedModel(
        [
            calls(("bash#b1", {"command": "make"})),
            text("one"),
            calls(("bash#b2", {"command": "make"})),
            text("two"),
        ]
    )
    tools = CorpusTools()
    plugins = [("permissions", dsh_permissions), ("tools", tools), ("asker", asker)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options=dict(OPTIONS))
        with anyio.fail_after(10):
            await run_turn(agent, "first")
            agent.agent.options["permissions"] = {"deny": ["bash(make*)"]}
            events = await run_turn(agent, "second")

    assert tools.ran == ["bash make"]
    (decision,) = decisions(events)
    assert (decision["decision"], decision["rule"]) == ("deny", "deny: bash(make*)")
