"""Fail closed, the cases of the mutation review (see
test_permissions_fail_closed_scenarios.py) that check the policy, the tool facts and the
settings directly rather than through a scenario: grants, cached verdicts, command
tools, canonical paths, merged settings, an agent's ask rules.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from permissions_util import FakeAgent, make_tools

from dsh.tools import tool
from dsh_permissions import Permissions
from dsh_permissions._calls import _THE_TOOL
from dsh_permissions._commands import command_subjects
from dsh_permissions._decide import Policy, decide
from dsh_permissions._settings import PermissionSettings, PermissionsSection
from dsh_permissions._subjects import ToolFacts, path_subject

pytestmark = pytest.mark.plugins("permissions")


def _policy(root, **settings):
    return Policy(PermissionSettings(**settings), root)


def test_D13_grant_never_allows_an_unknown_value(layout):
    root = str(layout.ws)
    bash = ToolFacts("bash", True, True, (), ("command",))
    (known,) = command_subjects("cat '$HOME/.ssh/id_rsa'", root)
    (dynamic,) = command_subjects("cat $HOME/.ssh/id_rsa", root)
    # shown apart (quoted as written) since session 29; a grant of either text, even
    # of the dynamic one's own, never allows the value only the shell knows
    assert known.value == "cat '$HOME/.ssh/id_rsa'" and known.rememberable
    assert dynamic.value == "cat $HOME/.ssh/id_rsa"
    grants = {("bash", "command", known.value), ("bash", "command", dynamic.value)}
    assert decide(_policy(root), "default", bash, [dynamic], grants).decision == "ask"


def test_D14_grant_is_per_tool(layout):
    root = str(layout.ws)
    subject = path_subject("notes.txt", root)
    grants = {("write", "path", subject.value)}
    remove = ToolFacts("remove", True, True, ("paths",))
    assert decide(_policy(root), "default", remove, [subject], grants).decision == "ask"


def test_D26_cached_verdict_follows_the_tool_facts(layout):
    policy = _policy(str(layout.ws))
    assert (
        decide(policy, "default", ToolFacts("t", True, False), [_THE_TOOL], set()).decision
        == "allow"
    )
    assert (
        decide(policy, "default", ToolFacts("t", True, True), [_THE_TOOL], set()).decision == "ask"
    )


def test_S1_a_command_tool_is_mutating_whatever_it_says():
    @tool(command_args=("command",))
    def run(command: str) -> str:
        "Run."
        return ""

    assert ToolFacts.of("run", run).mutating


def test_S3_D11_accept_edits_skips_tools_with_command_args(layout):
    root = str(layout.ws)
    facts = ToolFacts("run", True, True, ("cwd",), ("command",))
    subjects = [path_subject("src", root), *command_subjects("make", root)]
    policy = _policy(root, mode="accept-edits", allow=["run(make*)"])
    assert decide(policy, "accept-edits", facts, subjects, set()).decision == "ask"


def test_K37_dotdot_is_canonical(layout):
    (subject,) = command_subjects("ls ..", str(layout.ws))
    assert subject.value == f"ls {layout.root}"


def test_G14_section_and_plugin_settings_merge(layout):
    agent = FakeAgent(layout.ws, make_tools([]), None, {})
    agent.harness = SimpleNamespace(
        settings={"permissions": PermissionsSection},
        config=SimpleNamespace(section=lambda n: PermissionsSection(deny=("bash(rm *)",))),
    )
    settings = Permissions({"allow": ["read"]}).settings_for(agent)
    assert "bash(rm *)" in settings.deny


def test_T2_an_agent_cannot_lift_a_plugin_wide_ask(layout):
    agent = FakeAgent(layout.ws, make_tools([]), None, {"permissions": {"ask": ["bash(x)"]}})
    settings = Permissions({"ask": ["bash(git push*)"]}).settings_for(agent)
    assert "bash(git push*)" in settings.ask
