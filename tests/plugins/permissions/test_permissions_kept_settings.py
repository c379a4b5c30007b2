"""The settings and policy an agent's calls are checked by are kept between calls, and
every change to what they are made of applies at the very next call (fail closed: a
kept policy that allows what the new rules deny would let the call run). Each test
makes one call, changes one input, and makes the next: the agent's options changed in
place or replaced, the harness's ``permissions:`` section or config replaced, the
plugin's settings replaced, an approval recorded in the session."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from permissions_util import Asker, FakeAgent, make_tools

import dsh_permissions
from dsh import ToolCall, create_plugin_manager
from dsh._config_models import Config
from dsh_permissions import PermissionAnswer
from dsh_permissions._approvals import DECISION_EVENT
from dsh_permissions._settings import PermissionSettings, PermissionsSection

pytestmark = pytest.mark.plugins("permissions")

# ``deploy`` is mutating and names no path or command (as the bench's ``add`` call):
# decided by tool rules alone, from the policy kept for the agent
DEPLOY = ToolCall(id="c", name="deploy", arguments="{}")


def agent_with(layout: Any, options: dict[str, Any], relay: Any = None) -> FakeAgent:
    return FakeAgent(layout.ws, make_tools([]), relay, options)


async def decision(plugin: Any, agent: Any, call: ToolCall = DEPLOY) -> str:
    """``allow`` or ``deny`` (no front end is loaded: an asked call is denied, B48)."""
    result = await plugin.tools_execute(agent, call, 1, 1)
    return "allow" if result is None else "deny"


def last_rule(agent: Any) -> str | None:
    events = [e.data for e in agent.session.events if e.type == DECISION_EVENT]
    rule: str | None = events[-1]["rule"]
    return rule


def allowed_by_rule() -> dict[str, Any]:
    return {"permissions": {"allow": ["deploy"]}}


async def test_a_deny_added_in_place_applies_at_the_next_call(layout):
    """B47: a deny rule set in the same ``permissions`` dict stops the next call."""
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, allowed_by_rule())
    assert await decision(plugin, agent) == "allow"
    agent.options["permissions"]["deny"] = ["deploy"]
    assert await decision(plugin, agent) == "deny"
    assert last_rule(agent) == "deny: deploy"


async def test_a_deny_appended_to_a_list_in_place_applies_at_the_next_call(layout):
    """B47: a rule appended to the very list the settings were read from counts."""
    plugin = dsh_permissions.Permissions()
    options = {"permissions": {"allow": ["deploy"], "deny": ["fetch"]}}
    agent = agent_with(layout, options)
    assert await decision(plugin, agent) == "allow"
    options["permissions"]["deny"].append("deploy")
    assert await decision(plugin, agent) == "deny"
    assert last_rule(agent) == "deny: deploy"


async def test_an_allow_removed_in_place_applies_at_the_next_call(layout):
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, allowed_by_rule())
    assert await decision(plugin, agent) == "allow"
    agent.options["permissions"]["allow"][0] = "fetch"  # the same list, another rule
    assert await decision(plugin, agent) == "deny"  # asked, and nobody can answer
    assert last_rule(agent) is None  # the mode decided: no rule allows it any more


async def test_replaced_rules_apply_at_the_next_call(layout):
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, allowed_by_rule())
    assert await decision(plugin, agent) == "allow"
    agent.options["permissions"] = {"allow": ["deploy"], "deny": ["deploy"]}
    assert await decision(plugin, agent) == "deny"
    agent.options = {"permissions": {"allow": ["deploy"]}}  # the whole options replaced
    assert await decision(plugin, agent) == "allow"
    agent.options = {"permissions": {"mode": "plan", "allow": ["deploy"]}}
    assert await decision(plugin, agent) == "deny"
    del agent.options["permissions"]  # no rule of the agent's left: asked, denied
    assert await decision(plugin, agent) == "deny"
    assert last_rule(agent) is None


async def test_a_mode_set_in_place_applies_at_the_next_call(layout):
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, allowed_by_rule())
    assert await decision(plugin, agent) == "allow"
    agent.options["permissions"]["mode"] = "plan"  # a mutating tool is refused
    assert await decision(plugin, agent) == "deny"
    agent.options["permissions"]["mode"] = "sometimes"  # invalid: fails closed
    result = await plugin.tools_execute(agent, DEPLOY, 1, 1)
    assert result is not None and "options.permissions.mode" in result.content


async def test_a_non_text_rule_added_in_place_is_refused_at_the_next_call(layout):
    """A rule list given a value that is not text fails closed at the next call, naming
    the key; the kept settings are not used for it."""
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, {"permissions": {"allow": ["deploy"], "ask_timeout": 1}})
    assert await decision(plugin, agent) == "allow"
    agent.options["permissions"]["allow"].append(1)
    result = await plugin.tools_execute(agent, DEPLOY, 1, 1)
    assert result is not None and "options.permissions.allow[1]" in result.content


def harness_with(settings: dict[str, Any], config: Any) -> SimpleNamespace:
    return SimpleNamespace(settings=settings, config=config)


async def test_options_under_the_registered_name_changed_in_place_apply(layout):
    """The entry-point module registered as ``guard`` reads ``options["guard"]``: a
    deny added there in place stops the next call, as under ``permissions``."""
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, {"guard": {"allow": ["deploy"]}})
    agent.harness = harness_with({"guard": PermissionsSection}, Config(source="dsh.yml"))
    assert await decision(plugin, agent) == "allow"
    agent.options["guard"]["deny"] = ["deploy"]
    assert await decision(plugin, agent) == "deny"
    assert last_rule(agent) == "deny: deploy"


async def test_a_section_replaced_in_the_same_config_applies_at_the_next_call(layout):
    plugin = dsh_permissions.Permissions()
    config = Config(source="dsh.yml", sections={"permissions": PermissionsSection()})
    agent = agent_with(layout, allowed_by_rule())
    agent.harness = harness_with({"permissions": PermissionsSection}, config)
    assert await decision(plugin, agent) == "allow"
    config.sections["permissions"] = PermissionsSection(deny=("deploy",))
    assert await decision(plugin, agent) == "deny"
    assert last_rule(agent) == "deny: deploy"
    del config.sections["permissions"]
    assert await decision(plugin, agent) == "allow"


async def test_a_replaced_config_applies_at_the_next_call(layout):
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, allowed_by_rule())
    agent.harness = harness_with({"permissions": PermissionsSection}, Config(source="dsh.yml"))
    assert await decision(plugin, agent) == "allow"
    denying = {"permissions": PermissionsSection(deny=("deploy",))}
    agent.harness.config = Config(source="dsh.yml", sections=denying)
    assert await decision(plugin, agent) == "deny"
    assert last_rule(agent) == "deny: deploy"


async def test_settings_registered_later_apply_at_the_next_call(layout):
    """The name the section is read under comes from the harness's registry each call."""
    plugin = dsh_permissions.Permissions()
    denying = {"guard": PermissionsSection(deny=("deploy",))}
    agent = agent_with(layout, allowed_by_rule())
    agent.harness = harness_with({}, Config(source="dsh.yml", sections=denying))
    assert await decision(plugin, agent) == "allow"
    agent.harness.settings["guard"] = PermissionsSection
    assert await decision(plugin, agent) == "deny"


async def test_a_second_name_registered_later_applies_at_the_next_call(layout):
    """Registered under ``permissions`` the settings are kept; registered under a
    second name too, the options under that name apply at the next call (the names are
    looked up in the harness's registry each call, not kept)."""
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, {**allowed_by_rule(), "guard": {"deny": ["deploy"]}})
    agent.harness = harness_with({"permissions": PermissionsSection}, Config(source="dsh.yml"))
    assert await decision(plugin, agent) == "allow"
    agent.harness.settings["guard"] = PermissionsSection
    assert await decision(plugin, agent) == "deny"
    assert last_rule(agent) == "deny: deploy"
    del agent.harness.settings["guard"]
    assert await decision(plugin, agent) == "allow"


async def test_replaced_plugin_settings_apply_at_the_next_call(layout):
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, allowed_by_rule())
    assert await decision(plugin, agent) == "allow"
    plugin.settings = PermissionSettings(deny=("deploy",))
    assert await decision(plugin, agent) == "deny"
    plugin.settings = None
    assert await decision(plugin, agent) == "allow"


async def test_an_approval_recorded_in_the_session_applies_at_the_next_call(layout):
    """An "always" answer logged in the session (as a resumed log holds it) allows the
    next call of the tool without asking; one logged for another session does not."""
    plugin = dsh_permissions.Permissions()
    agent = agent_with(layout, {})
    assert await decision(plugin, agent) == "deny"  # asked, nobody to answer
    data = {
        "tool": "deploy",
        "call_id": "x",
        "answer": "always",
        "remember": [
            {"tool": "deploy", "kind": "tool", "value": "", "workspace": str(layout.ws.resolve())}
        ],
    }
    await agent.session.emit(DECISION_EVENT, data)
    assert await decision(plugin, agent) == "allow"
    from dsh.session import Session

    agent.session = Session("another")
    assert await decision(plugin, agent) == "deny"


async def test_an_always_answer_applies_at_the_next_call(layout):
    asker = Asker(PermissionAnswer.always())
    plugin = dsh_permissions.Permissions()
    pm = create_plugin_manager([("asker", asker), ("permissions", plugin)], load_entry_points=False)
    agent = agent_with(layout, {}, pm.relay)
    assert await decision(plugin, agent) == "allow"
    assert await decision(plugin, agent) == "allow"
    assert len(asker.requests) == 1


async def test_a_replaced_config_file_is_guarded_at_the_next_call(layout):
    """accept-edits does not cover the config file that holds the rules: after the
    harness's config is replaced by one loaded from another file, that file."""
    plugin = dsh_permissions.Permissions()
    for name in ("a.yml", "b.yml"):
        (layout.ws / name).write_text("permissions: {}\n")
    agent = agent_with(layout, {"permissions": {"mode": "accept-edits"}})
    agent.harness = harness_with({}, Config(source=str(layout.ws / "a.yml")))
    write = ToolCall(id="w", name="write", arguments='{"path": "b.yml", "content": "x"}')
    assert await decision(plugin, agent, write) == "allow"
    agent.harness.config = Config(source=str(layout.ws / "b.yml"))
    assert await decision(plugin, agent, write) == "deny"  # asked: nobody to answer
