"""Rules that name no tool, beyond test_permissions_rule_names.py (found by a mutation
review): ``allow`` rules and every agent's rules are checked, a name merely like a
tool's (below the typo ratio) is only warned about, a tool whose name has capitals
matches its rule whatever the case, the plugin's section under another registered
name is checked under that name, and other plugins' sections are not read as rules."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel

import dsh_permissions
from dsh import HookError, hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh.tools import tool

pytestmark = pytest.mark.plugins("permissions")


async def start(config: str, *plugins: tuple[str, object]) -> None:
    async with scripted_harness(
        ScriptedModel([]),
        plugins=[("permissions", dsh_permissions), *plugins],
        load_entry_points=False,
        config_text=config,
    ):
        pass


async def refusal(config: str, *plugins: tuple[str, object]) -> str:
    with pytest.raises(HookError) as caught:
        await start(config, *plugins)
    return caught.value.for_user()


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "dsh_permissions"]


async def test_a_misspelt_allow_rule_stops_the_harness() -> None:
    assert (await refusal("permissions:\n  allow: ['raed(src/**)']\n")).startswith(
        "<string>:2:11: permissions.allow[0]: rule 'raed(src/**)' names no tool; "
        "did you mean 'read'?"
    )


async def test_every_agents_rules_are_checked() -> None:
    config = (
        "agents:\n"
        "  - {id: a, options: {permissions: {deny: [bash]}}}\n"
        "  - {id: b, options: {permissions: {deny: ['bsah(rm *)']}}}\n"
    )
    assert (await refusal(config)).startswith(
        "<string>:3:44: agents[1].options.permissions.deny[0]: rule 'bsah(rm *)' names no tool"
    )


async def test_a_name_merely_like_a_tools_is_warned_about_not_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``bashful`` is 0.73 alike ``bash``: a tool of its own (of a plugin not loaded
    now), not a typo."""
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        await start("permissions:\n  deny: [bashful]\n")
    (warning,) = warnings(caplog)
    assert warning.startswith(
        "warning: <string>:2:10: permissions.deny[0]: rule 'bashful' names no tool that is"
    )


@tool(name="MyTool")
def my_tool() -> str:
    "A tool whose name has capitals."
    return "ok"


class CapitalTools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(my_tool)


@pytest.mark.parametrize("rule", ["MyTool", "mytool(*)"])
async def test_a_rule_for_a_tool_with_capitals_names_it(
    caplog: pytest.LogCaptureFixture, rule: str
) -> None:
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        await start(f"permissions:\n  deny: ['{rule}']\n", ("mine", CapitalTools()))
    assert warnings(caplog) == []


async def test_the_section_is_checked_under_the_name_the_plugin_is_registered_by() -> None:
    with pytest.raises(HookError) as caught:
        async with scripted_harness(
            ScriptedModel([]),
            plugins=[("guard", dsh_permissions)],
            load_entry_points=False,
            config_text="guard:\n  ask: [wirte]\n",
        ):
            pass
    assert caught.value.for_user().startswith(
        "<string>:2:9: guard.ask[0]: rule 'wirte' names no tool"
    )


class Quotas(BaseModel):
    deny: int = 0


class QuotaPlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Quotas)


async def test_another_plugins_section_is_not_read_as_rules(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = "quota:\n  deny: 3\npermissions:\n  deny: [bash]\n"
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        await start(config, ("quota", QuotaPlugin()))
    assert warnings(caplog) == []


async def test_an_agents_deny_rules_under_the_registered_name_are_enforced(
    tmp_path: Any,
) -> None:
    model = ScriptedModel([tool_calls(("bash", {"command": "touch ran"})), text("done")])
    async with scripted_harness(
        model,
        plugins=[("guard", dsh_permissions)],
        load_entry_points=False,
        config_text="guard:\n  allow: [bash]\n",
        workspace=tmp_path,
    ) as h:
        agent = await h.agents.create(
            "a", options={"model": "scripted", "guard": {"deny": ["bash"]}}
        )
        await run_turn(agent, "go")
    assert not (tmp_path / "ran").exists()
