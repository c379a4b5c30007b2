"""Verdicts a policy remembers: only those that no later change can alter.

A call's subjects are worked out afresh each time (paths resolved then), and a verdict
is kept only when it is a deny or an allow no grant made, so what the filesystem and
the grants say now always decides."""

from __future__ import annotations

from typing import Any

import pytest
from permissions_util import Asker, FakeAgent, make_tools

import dsh_permissions
from dsh import ToolCall, create_plugin_manager
from dsh.session import Session
from dsh.tools import ToolRegistry, tool
from dsh_permissions import PermissionAnswer

pytestmark = pytest.mark.plugins("permissions")


async def calls(
    layout: Any, answer: PermissionAnswer, *steps: Any, **options: Any
) -> tuple[list[str], int]:
    """Run the same agent through ``steps`` (a ToolCall, or a callable given the agent,
    run between calls); the decisions logged, in order, and how often a person was
    asked."""
    asker = Asker(answer)
    pm = create_plugin_manager(
        [("permissions", dsh_permissions), ("asker", asker)], load_entry_points=False
    )
    agent = FakeAgent(layout.ws, make_tools([]), pm.relay, {"permissions": options})
    decisions: list[str] = []
    for step in steps:
        if isinstance(step, ToolCall):
            await pm.relay.tools_execute(agent, step, 1, 1)
            decisions.append(agent.session.events[-1].data["decision"])
        else:
            step(agent)
    return decisions, len(asker.requests)


async def test_a_retargeted_link_is_judged_by_where_it_points_now(layout):
    link = layout.ws / "moving"
    link.symlink_to(layout.ws / "src")
    write = ToolCall(id="w", name="write", arguments='{"path": "moving/x.py"}')

    def retarget(agent: FakeAgent) -> None:
        link.unlink()
        link.symlink_to(layout.outside)

    got = await calls(
        layout, PermissionAnswer.deny("t"), write, write, retarget, write, mode="accept-edits"
    )
    assert got == (["allow", "allow", "deny"], 1)  # inside twice, then outside: asked


async def test_an_allow_a_grant_made_ends_with_the_grants(layout):
    deploy = ToolCall(id="d", name="deploy", arguments="{}")

    def new_session(agent: FakeAgent) -> None:  # grants live in a session's log
        agent.session = Session("another")

    got = await calls(layout, PermissionAnswer.always(), deploy, deploy, new_session, deploy)
    assert got == (["allow", "allow", "allow"], 2)  # asked, granted; asked again


async def test_a_rule_decision_is_the_same_every_time(layout):
    fetch = ToolCall(id="f", name="fetch", arguments='{"url": "x"}')

    got = await calls(layout, PermissionAnswer.deny("t"), fetch, fetch, deny=["fetch"])
    assert got == (["deny", "deny"], 0)


async def test_a_tool_replaced_in_the_registry_is_judged_by_what_it_declares_now(layout):
    deploy = ToolCall(id="d", name="deploy", arguments="{}")

    def harmless_deploy(agent: FakeAgent) -> None:
        @tool(name="deploy")
        def dry_run() -> str:
            "Show what a deploy would do (changes nothing)."
            return "ran"

        agent.tools = ToolRegistry()
        agent.tools.add("t", dry_run)

    got = await calls(layout, PermissionAnswer.deny("t"), deploy, harmless_deploy, deploy)
    assert got == (["deny", "allow"], 1)  # mutating: asked, refused; then read-only


# Review of session 43, finding 1: a kept verdict outlived what the rules resolved on
# disk (a pattern's literal directories, a venv's marker), which the docs promise is
# looked at again at every call.


async def test_a_kept_allow_ends_when_a_deny_pattern_directory_is_relinked(layout):
    vault, other = layout.root / "vault", layout.root / "other"
    vault.mkdir()
    other.mkdir()
    (other / "k").write_text("key\n")
    link = layout.ws / "secrets"
    link.symlink_to(vault)
    read = ToolCall(id="r", name="read", arguments=f'{{"path": "{other}/k"}}')
    cat = ToolCall(id="c", name="bash", arguments=f'{{"command": "cat {other}/k"}}')

    def relink(agent: FakeAgent) -> None:
        link.unlink()
        link.symlink_to(other)

    got = await calls(
        layout,
        PermissionAnswer.deny("t"),
        read,
        cat,
        relink,
        read,
        cat,
        deny=["read(secrets/**)"],
        allow=["bash(cat *)"],
    )
    assert got == (["allow", "allow", "deny", "deny"], 0)


async def test_a_kept_accept_edits_allow_ends_when_its_directory_becomes_a_venv(layout):
    (layout.ws / "env3" / "lib" / "python3.12").mkdir(parents=True)
    write = ToolCall(id="w", name="write", arguments='{"path": "env3/lib/python3.12/foo.py"}')

    def make_venv(agent: FakeAgent) -> None:
        (layout.ws / "env3" / "pyvenv.cfg").write_text("home = /usr/bin\n")

    got = await calls(
        layout, PermissionAnswer.deny("t"), write, make_venv, write, mode="accept-edits"
    )
    assert got == (["allow", "deny"], 1)  # then asked, and refused


async def test_a_kept_verdict_is_still_used_while_the_file_system_is_unchanged(layout, monkeypatch):
    """The check of what a kept verdict read is all that is done again: the rules are
    not matched a second time."""
    from dsh_permissions import _decide

    judged: list[str] = []
    judge = _decide._judge

    def counted(*args: Any) -> Any:
        judged.append(args[3].kind)
        return judge(*args)

    monkeypatch.setattr(_decide, "_judge", counted)
    read = ToolCall(id="r", name="read", arguments='{"path": "src/a.py"}')
    got = await calls(
        layout, PermissionAnswer.deny("t"), read, read, read, deny=["read(secrets/**)"]
    )
    assert got == (["allow"] * 3, 0)
    assert judged == ["path"]
