"""Rules that would match nothing or not what they say, beyond the misspelt tool name
of ``dsh.yml`` (found by the session-29 user-journey review): the same near miss in
options given in code, a ``$`` in a path pattern (``read($HOME/.gnupg/**)`` named a
directory ``$HOME`` in the workspace), ``**`` inside a component and an unclosed ``[``
(each taken for something else by the matcher: a deny rule that stops nothing)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import dsh_permissions
from dsh import DshError, HookError
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

pytestmark = pytest.mark.plugins("permissions")


async def refusal(config: str) -> str:
    with pytest.raises(HookError) as caught:
        async with scripted_harness(
            ScriptedModel([]),
            plugins=[("permissions", dsh_permissions)],
            load_entry_points=False,
            config_text=config,
        ):
            pass
    return caught.value.for_user()


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("read($HOME/.gnupg/**)", "'$' is not expanded in a path pattern"),
        ("write(${HOME}/x)", "write ~/ for the home directory"),
        ("read([abc)", "the '[' in '[abc' is not closed by ']'"),
        ("read(src/***/x)", "'**' must be a whole path component ('src/**/x'), not part of '***'"),
        ("write(src/**foo)", "not part of '**foo'"),
        ("grep(a/[!]x)", "the '[' in '[!]x' is not closed"),
    ],
)
async def test_a_bad_path_pattern_stops_the_harness_saying_where(rule: str, why: str) -> None:
    said = await refusal(f"permissions:\n  deny: ['{rule}']\n")
    assert said.startswith(f"<string>:2:10: permissions.deny[0]: rule {rule!r} has a bad path")
    assert why in said


@pytest.mark.parametrize(
    "rule", ["read(src/**)", "read(**/*.[ch])", "read([]x])", "bash(echo $HOME)"]
)
async def test_good_patterns_and_dollars_in_commands_are_accepted(rule: str) -> None:
    async with scripted_harness(
        ScriptedModel([]),
        plugins=[("permissions", dsh_permissions)],
        load_entry_points=False,
        config_text=f"permissions:\n  deny: ['{rule}']\n",
    ):
        pass


async def test_a_tool_no_plugin_registered_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """Shown as ``dsh: warning: ...`` as the config's other warnings are."""
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        async with scripted_harness(
            ScriptedModel([]),
            plugins=[("permissions", dsh_permissions)],
            load_entry_points=False,
            config_text="permissions:\n  deny: ['shell(rm *)']\n",
        ):
            pass
    (said,) = [r.getMessage() for r in caplog.records if r.name == "dsh_permissions"]
    assert said.startswith("warning: <string>:2:10: permissions.deny[0]: rule 'shell(rm *)'")


@pytest.mark.parametrize(
    ("rules", "said"),
    [
        (
            {"deny": ["bash", "bsah(rm *)"]},
            "agent 'a': option permissions.deny[1]: rule 'bsah(rm *)' names no tool; "
            "did you mean 'bash'?",
        ),
        (
            {"allow": ["bash"], "deny": ["read($HOME/x)"]},
            "agent 'a': option permissions.deny[0]: rule 'read($HOME/x)' has a bad path pattern",
        ),
    ],
)
async def test_rules_given_in_code_are_checked_and_the_agent_runs_nothing(
    tmp_path: Any, caplog: pytest.LogCaptureFixture, rules: dict[str, Any], said: str
) -> None:
    model = ScriptedModel([tool_calls(("bash", {"command": "touch ran"})), text("done")])
    async with scripted_harness(
        model,
        plugins=[("permissions", dsh_permissions)],
        load_entry_points=False,
        config_text="permissions:\n  allow: [bash]\n",
        workspace=tmp_path,
    ) as h:
        with caplog.at_level(logging.WARNING):
            # a settings object is not validated again (a dict is: see below)
            own = dsh_permissions.PermissionSettings(**rules)
            agent = await h.agents.create("a", options={"model": "scripted", "permissions": own})
        assert any(said in r.getMessage() for r in caplog.records), "reported when created"
        await run_turn(agent, "go")
    assert not (tmp_path / "ran").exists()
    assert said in str(model.requests[-1].messages[-1].content)


@pytest.mark.parametrize(
    ("rules", "said"),
    [
        (
            {"deny": ["bash", "bsah(rm *)"]},
            "agent 'a': option permissions.deny[1]: rule 'bsah(rm *)' names no tool; "
            "did you mean 'bash'? (it would match no call)",
        ),
        (
            {"allow": ["bash"], "deny": ["read($HOME/x)"]},
            "agent 'a': option permissions.deny[0]: rule 'read($HOME/x)' has a bad path pattern",
        ),
    ],
)
async def test_agents_create_refuses_rules_given_in_code_that_name_a_near_miss(
    tmp_path: Any, rules: dict[str, Any], said: str
) -> None:
    """Reported at agent_created, but agents.create made the agent anyway (a
    notification cannot refuse): the settings are validated with the harness in
    pydantic's validation context, so create raises as dsh.yml's check stops a start."""
    async with scripted_harness(
        ScriptedModel([]),
        plugins=[("permissions", dsh_permissions)],
        load_entry_points=False,
        workspace=tmp_path,
    ) as h:
        with pytest.raises(DshError) as refused:
            await h.agents.create("a", options={"model": "scripted", "permissions": rules})
        assert said in str(refused.value)
        assert [a.id for a in h.agents.list()] == []
        kept = {"allow": ["bash", "mcp_*"], "deny": ["nosuchtool"]}  # no near miss: let be
        await h.agents.create("b", options={"model": "scripted", "permissions": kept})
