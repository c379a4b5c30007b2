"""Settings: validation with the key path, where settings come from and how they merge,
and the plugin as an installed entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from permissions_util import FakeAgent, make_tools
from pydantic import ValidationError

import dsh_permissions
from dsh import ConfigError, ToolCall, create_plugin_manager, list_plugins
from dsh.config import load_config
from dsh.harness import Harness
from dsh_permissions import Permissions, PermissionSettings
from dsh_permissions._settings import PermissionsSection

pytestmark = pytest.mark.plugins("permissions")

SETTINGS = {"permissions": PermissionSettings}


def test_a_full_section_loads():
    text = """
permissions:
  mode: accept-edits
  allow: ["bash(git status*)", read]
  ask: ["bash(git push*)"]
  deny: ["write(/etc/**)"]
  ask_timeout: 30
"""
    section = load_config(text=text, settings=SETTINGS).section("permissions")

    assert section.mode == "accept-edits"
    assert section.allow == ("bash(git status*)", "read")
    assert section.deny == ("write(/etc/**)",)
    assert section.ask_timeout == 30


@pytest.mark.parametrize(
    ("text", "path", "reason"),
    [
        (
            "permissions:\n  allow: [ok, 'bash(git status']\n",
            "permissions.allow[1]",
            "end with ')'",
        ),
        ("permissions:\n  deny: ['bash()']\n", "permissions.deny[0]", "the pattern is empty"),
        ("permissions:\n  ask: ['two words']\n", "permissions.ask[0]", "is not a rule"),
        ("permissions:\n  mode: yolo\n", "permissions.mode", "'default'"),
        ("permissions:\n  mdoe: plan\n", "permissions.mdoe", "did you mean 'mode'"),
        ("permissions:\n  allow: bash\n", "permissions.allow", "a list ([a, b], or one"),
        ("permissions:\n  ask_timeout: 0\n", "permissions.ask_timeout", "greater than 0"),
        # NaN is below no bound: it was "should be greater than 0"
        (
            "permissions:\n  ask_timeout: .nan\n",
            "permissions.ask_timeout",
            "Input should be a number, not .nan (NaN)",
        ),
        ("permissions:\n  ask_timeout: -.inf\n", "permissions.ask_timeout", "greater than 0"),
    ],
)
def test_bad_settings_name_the_key_and_the_reason(text, path, reason):
    with pytest.raises(ConfigError) as caught:
        load_config(text=text, settings=SETTINGS, source="dsh.yml")

    assert caught.value.path == path
    assert reason in caught.value.reason


def test_the_registered_section_model():
    registered = []
    dsh_permissions.register_settings(registered.append)

    assert registered == [PermissionsSection]
    assert issubclass(PermissionsSection, PermissionSettings)


def agent_with(layout, **options) -> FakeAgent:
    return FakeAgent(layout.ws, make_tools([]), None, options)


def test_agent_options_are_the_settings_without_plugin_wide_ones(layout):
    agent = agent_with(layout, permissions={"mode": "plan", "deny": ["bash"]})

    settings = Permissions().settings_for(agent)

    assert settings.mode == "plan" and settings.deny == ("bash",)


def test_no_settings_anywhere_means_default_mode_and_no_rules(layout):
    settings = Permissions().settings_for(agent_with(layout))

    assert settings == PermissionSettings()
    assert settings.mode == "default"


def test_an_agent_adds_rules_and_cannot_lift_plugin_wide_denies(layout):
    plugin = Permissions({"mode": "accept-edits", "deny": ["bash(rm *)"], "ask_timeout": 9})
    agent = agent_with(layout, permissions={"allow": ["bash(rm *)"]})

    settings = plugin.settings_for(agent)

    assert settings.deny == ("bash(rm *)",) and settings.allow == ("bash(rm *)",)
    assert settings.mode == "accept-edits" and settings.ask_timeout == 9


def test_an_agent_that_sets_the_mode_replaces_it(layout):
    plugin = Permissions(PermissionSettings(mode="accept-edits"))
    agent = agent_with(layout, permissions={"mode": "plan"})

    assert plugin.settings_for(agent).mode == "plan"


async def test_the_dsh_yml_section_reaches_the_plugin_and_merges_with_agent_options(layout):
    text = "permissions:\n  deny: ['write(/etc/**)']\n"
    harness = Harness(
        plugins=[("permissions", dsh_permissions)],
        load_entry_points=False,
        config_text=text,
        workspace=layout.ws,
    )
    async with harness:
        agent = await harness.agents.create("a", options={"permissions": {"allow": ["read"]}})
        settings = dsh_permissions._default().settings_for(agent.agent)

    assert settings.deny == ("write(/etc/**)",)
    assert settings.allow == ("read",)


def test_constructor_settings_are_validated():
    with pytest.raises(ValidationError):
        Permissions({"mode": "sometimes"})


async def test_a_constructed_plugin_enforces_its_settings_in_the_loop(layout):
    plugin = Permissions({"deny": ["write(/etc/**)"]})
    pm = create_plugin_manager([("permissions", plugin)], load_entry_points=False)
    ran: list[str] = []
    agent = FakeAgent(layout.ws, make_tools(ran), pm.relay, {})
    call = ToolCall(id="c", name="write", arguments='{"path": "/etc/hosts"}')

    result = await pm.relay.tools_execute(agent, call, 1, 1)

    assert result is not None and result.is_error and "deny: write(/etc/**)" in result.content
    assert ran == []
    assert pm.hook.permission_ask.spec is not None


async def test_settings_changed_in_place_take_effect_at_the_next_call(layout):
    """The plugin caches an agent's settings; the cache must see every change."""
    pm = create_plugin_manager([("permissions", Permissions())], load_entry_points=False)
    ran: list[str] = []
    agent = FakeAgent(layout.ws, make_tools(ran), pm.relay, {"permissions": {"allow": ["write"]}})
    call = ToolCall(id="c", name="write", arguments='{"path": "notes.txt", "content": "x"}')

    allowed = await pm.relay.tools_execute(agent, call, 1, 1)
    assert allowed is not None and not allowed.is_error  # it ran
    agent.options["permissions"]["deny"] = ["write"]  # in place
    denied = await pm.relay.tools_execute(agent, call, 1, 2)
    assert denied is not None and denied.is_error and "deny: write" in denied.content
    agent.options["permissions"] = {"allow": ["write"]}  # replaced
    allowed = await pm.relay.tools_execute(agent, call, 1, 3)
    assert allowed is not None and not allowed.is_error
    agent.options["permissions"]["mode"] = "plan"  # plan mode: a write is refused
    planned = await pm.relay.tools_execute(agent, call, 1, 4)
    assert planned is not None and planned.is_error and "plan mode" in planned.content
    agent.options["permissions"]["mode"] = "sometimes"  # invalid: fails closed
    broken = await pm.relay.tools_execute(agent, call, 1, 5)
    assert broken is not None and broken.is_error and "options.permissions.mode" in broken.content
    assert len(ran) == 2


def test_installed_as_the_plugin_named_permissions():
    pm = create_plugin_manager(select=["permissions"], env={"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"})

    info = {p.name: p for p in list_plugins(pm)}["permissions"]

    assert info.distribution == "dsh-permissions"
    hooks = ("agent_created", "harness_started", "register_settings", "tools_execute")
    assert info.hooks == hooks
    assert pm.get_plugin("permissions") is dsh_permissions
    assert pm.hook.permission_ask.spec is not None


def test_the_gate_is_tryfirst():
    assert dsh_permissions.tools_execute.dsh_impl["tryfirst"] is True  # type: ignore[attr-defined]


def test_a_front_end_registered_before_the_plugin_needs_optionalhook():
    from permissions_util import Asker

    pm = create_plugin_manager(
        [("asker", Asker()), ("permissions", dsh_permissions)], load_entry_points=False
    )

    impls = pm.hook.permission_ask.get_hookimpls()
    assert [i.plugin_name for i in impls] == ["asker"]


async def test_bad_agent_settings_are_refused_when_the_agent_is_created():
    from dsh import DshError
    from dsh.testing import ScriptedModel, scripted_harness

    plugins = [("permissions", dsh_permissions)]
    options = {"permissions": {"allow": ["read", "bash(git status"]}}
    async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.create("a", options=options)
        assert h.agents.list() == []
    assert str(caught.value) == (
        "agent 'a': option permissions.allow[1]: 'bash(git status': the pattern must end with ')'"
    )


async def test_a_plugin_object_that_cannot_be_hashed_starts_beside_the_gate():
    """A dataclass instance (``eq=True`` makes it unhashable) is a plugin as any object
    is: looking for a second gate in a set of the plugins failed start-up with
    ``plugin 'permissions' failed in hook harness_started ...: TypeError: unhashable
    type: 'Guard'``, blaming dsh-permissions for another plugin's object."""
    import dataclasses

    from dsh import hookimpl
    from dsh.harness import Harness

    @dataclasses.dataclass
    class Guard:
        limit: int = 3

        @hookimpl
        def agent_request(self, request):
            return None

    plugins = [("permissions", dsh_permissions), ("guard", Guard())]
    async with Harness(plugins=plugins, load_entry_points=False) as harness:
        assert harness.pm.get_plugin("guard") == Guard()


async def test_a_second_permission_gate_stops_start_up_naming_both():
    """The entry point's plugin and a ``Permissions`` object beside it would each check,
    and ask about, every call (dsh accepts their shared ``dsh_hookspecs``)."""
    from dsh import HookError
    from dsh.harness import Harness

    gates = [("permissions", dsh_permissions), ("mine", Permissions({"deny": ["bash(rm *)"]}))]
    with pytest.raises(HookError) as caught:
        async with Harness(plugins=gates, load_entry_points=False):
            pass
    assert "2 permission gates are registered ('mine', 'permissions')" in str(caught.value)
    async with Harness(plugins=gates[1:], load_entry_points=False) as harness:
        assert harness.pm.get_plugin("mine") is not None  # one gate: it starts


def test_loading_the_plugin_imports_nothing_heavy():
    """dsh imports every plugin on every start (``dsh --help`` included)."""
    code = (
        "import sys, dsh; before = set(sys.modules)\n"
        "from dsh.plugins import create_plugin_manager, list_plugins\n"
        "pm = create_plugin_manager(select=['permissions'], "
        "env={'DSH_DISABLE_PLUGIN_AUTOLOAD': '1'}); list_plugins(pm)\n"
        "new = sorted(m for m in set(sys.modules) - before if m.startswith(('pydantic', 'dsh_')))\n"
        "print(new)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert out.stdout.strip() == "['dsh_permissions', 'dsh_permissions.hookspecs']"


async def test_a_workspace_link_pointed_elsewhere_moves_the_workspace_root(layout):
    """The plugin reuses the workspace's real path while it names the same directory;
    once the workspace (a link here) names another one, the root follows it."""
    pm = create_plugin_manager([("permissions", Permissions())], load_entry_points=False)
    link = layout.root / "current"
    link.symlink_to(layout.ws)
    ran: list[str] = []
    agent = FakeAgent(link, make_tools(ran), pm.relay, {"permissions": {"mode": "accept-edits"}})

    def write(path):
        arguments = json.dumps({"path": str(path), "content": "x"})
        return ToolCall(id="c", name="write", arguments=arguments)

    inside = await pm.relay.tools_execute(agent, write(layout.ws / "notes.txt"), 1, 1)
    assert inside is not None and not inside.is_error
    link.unlink()
    link.symlink_to(layout.outside)
    old = await pm.relay.tools_execute(agent, write(layout.ws / "notes.txt"), 1, 2)
    assert old is not None and old.is_error  # outside the workspace now: asked, nobody answers
    new = await pm.relay.tools_execute(agent, write(layout.outside / "notes.txt"), 1, 3)
    assert new is not None and not new.is_error
    assert len(ran) == 2


async def test_only_calls_naming_paths_or_commands_check_the_workspace_path(layout, monkeypatch):
    """Resolving the workspace's real path again costs a ``realpath`` walk; a call
    decided by tool rules alone (no path or command arguments) skips it, and the next
    call that names a path still sees a workspace that moved."""
    pm = create_plugin_manager([("permissions", Permissions())], load_entry_points=False)
    link = layout.root / "current"
    link.symlink_to(layout.ws)
    ran: list[str] = []
    options = {"permissions": {"mode": "accept-edits", "allow": ["fetch"]}}
    agent = FakeAgent(link, make_tools(ran), pm.relay, options)
    fetch = ToolCall(id="f", name="fetch", arguments='{"url": "https://example.org"}')
    write = ToolCall(id="w", name="write", arguments=json.dumps({"path": "notes.txt"}))

    async def allowed(call: ToolCall, step: int) -> bool:
        result = await pm.relay.tools_execute(agent, call, 1, step)
        return result is not None and not result.is_error

    assert await allowed(fetch, 1)  # the policy is made
    resolved: list[str] = []
    realpath = dsh_permissions._plugin.os.path.realpath
    monkeypatch.setattr(
        dsh_permissions._plugin.os.path,
        "realpath",
        lambda path, *a, **k: resolved.append(str(path)) or realpath(path, *a, **k),
    )

    assert await allowed(fetch, 2)
    assert resolved == []
    link.unlink()
    link.symlink_to(layout.outside)
    assert await allowed(write, 3)  # accept-edits allows it: inside the new root
    assert resolved[0] == str(link)
    assert ran == ["fetch https://example.org", "fetch https://example.org", "write notes.txt"]
