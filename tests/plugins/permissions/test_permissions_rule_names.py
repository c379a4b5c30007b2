"""A rule naming no tool: a deny rule with the tool's name misspelt (``bsah(rm *)``)
matches nothing and the command it was written against runs, so a near miss of a
registered tool stops the harness at start; a name no plugin registered is warned about
(found by the CI operator study: ``deny: [bsah(rm *)]`` passed ``config check``)."""

from __future__ import annotations

import logging

import pytest

import dsh_permissions
from dsh import HookError
from dsh.testing import ScriptedModel, scripted_harness
from dsh_permissions import Permissions

pytestmark = pytest.mark.plugins("permissions")


async def start(config: str, plugin: object = dsh_permissions) -> None:
    plugins = [("permissions", plugin)]
    async with scripted_harness(
        ScriptedModel([]), plugins=plugins, load_entry_points=False, config_text=config
    ):
        pass


@pytest.mark.parametrize(
    ("config", "place"),
    [
        (
            "permissions:\n  deny: ['bsah(rm *)']\n",
            "<string>:2:10: permissions.deny[0]: rule 'bsah(rm *)'",
        ),
        (
            "permissions:\n  allow: [read]\nagents:\n  - id: a\n    options:\n"
            "      permissions: {ask: [read, 'wirte(src/**)']}\n",
            "<string>:6:33: agents[0].options.permissions.ask[1]: rule 'wirte(src/**)'",
        ),
    ],
)
async def test_a_misspelt_tool_name_in_a_rule_stops_the_harness(config: str, place: str) -> None:
    with pytest.raises(HookError) as caught:
        await start(config)
    assert caught.value.plugin == "permissions"
    assert caught.value.hook == "harness_started"
    expected = "bash" if "bsah" in place else "write"
    assert caught.value.for_user() == (
        f"{place} names no tool; did you mean {expected!r}? (it would match no call) "
        "(plugin 'permissions')"
    )


async def test_settings_given_in_code_are_checked_too() -> None:
    with pytest.raises(HookError, match=r"Permissions\(settings\)\.deny\[0\]: rule 'Bsah'"):
        await start("", Permissions({"deny": ["Bsah"]}))


async def test_a_tool_no_plugin_registered_is_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = "permissions:\n  deny: ['mcp_github_push', 'mcp_*', 'Bash(rm *)', grep]\n"
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        await start(config)
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "dsh_permissions"]
    assert warning.startswith(
        "warning: <string>:2:10: permissions.deny[0]: rule 'mcp_github_push' names no tool that is "
        "registered (tools: "
    )


async def test_a_rule_when_no_tool_is_registered_says_so_not_an_empty_list(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """With the built-in tools left out (``dsh -p no:dsh.builtin_tools``) the warning
    ended in ``(tools: )``."""
    from dsh.plugins import create_plugin_manager

    pm = create_plugin_manager(select=["no:dsh.builtin_tools"], load_entry_points=False)
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        async with scripted_harness(
            ScriptedModel([]),
            plugins=[("permissions", dsh_permissions)],
            pm=pm,
            config_text="permissions:\n  deny: ['bash(rm *)']\n",
        ):
            pass
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "dsh_permissions"]
    assert warning == (
        "warning: <string>:2:10: permissions.deny[0]: rule 'bash(rm *)' names no tool that is "
        "registered (no tools are registered)"
    )
