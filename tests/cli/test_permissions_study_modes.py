"""The user study of dsh-permissions (see test_permissions_study.py), continued: modes
and no terminal, the decision event, bad rules, a third-party plugin's tool, and a
person answering "always" in a pseudo-terminal."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import dsh, in_terminal, text_reply, tool_call_reply
from permissions_study_support import DENY_RM, decisions, one_call, run, seen_by_model

pytestmark = pytest.mark.plugins("permissions")


# -- 4. no terminal: asking is denying ------------------------------------------------------


def test_an_ask_rule_in_ci_denies_and_says_how_to_let_it_run(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text(
        "permissions:\n  allow: ['bash(echo *)']\n  ask: ['bash(echo push*)']\n"
    )
    server = one_call(model_server, "bash", {"command": "echo pushed > pushed.txt"})
    events, _ = run(server, cli_env, tmp_path)
    assert not (tmp_path / "pushed.txt").exists()
    (decision,) = decisions(events)
    assert (decision["decision"], decision["rule"]) == ("deny", "ask: bash(echo push*)")
    assert decision["front_end"] is None and decision["answer"] is None
    assert "a rule in permissions.allow lets such a call run" in seen_by_model(server)


def test_plan_mode_denies_a_write_with_the_plan_advice(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text("permissions:\n  mode: plan\n  allow: [write]\n")
    server = one_call(model_server, "write", {"path": "notes.txt", "content": "x"})
    run(server, cli_env, tmp_path)
    assert not (tmp_path / "notes.txt").exists()
    assert "you are in plan mode, which is read-only" in seen_by_model(server)


def test_accept_edits_writes_inside_and_not_outside_the_workspace(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "dsh.yml").write_text(
        "permissions:\n  mode: accept-edits\n"
        f"agents:\n  - id: main\n    options:\n      extra_roots: [{tmp_path}]\n"
    )
    server = model_server(
        [
            tool_call_reply("write", {"path": "inside.txt", "content": "in"}, "c1"),
            tool_call_reply("write", {"path": "../outside.txt", "content": "out"}, "c2"),
            text_reply("ok"),
        ]
    )
    events, _ = run(server, cli_env, ws)
    assert [d["decision"] for d in decisions(events)] == ["allow", "deny"]
    assert (ws / "inside.txt").read_text() == "in"
    assert not (tmp_path / "outside.txt").exists()


def test_an_agents_bypass_cannot_lift_a_plugin_wide_deny(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text(
        "permissions:\n  deny: ['bash(rm *)']\n"
        "agents:\n  - id: main\n    options:\n      permissions:\n        mode: bypass\n"
    )
    (tmp_path / "victim").write_text("keep me\n")
    server = model_server(
        [
            tool_call_reply("bash", {"command": "rm -f victim"}, "c1"),
            tool_call_reply("bash", {"command": "touch made"}, "c2"),
            text_reply("ok"),
        ]
    )
    events, stderr = run(server, cli_env, tmp_path)
    assert [(d["decision"], d["mode"]) for d in decisions(events)] == [
        ("deny", "bypass"),
        ("allow", "bypass"),
    ]
    assert (tmp_path / "victim").exists() and (tmp_path / "made").exists()
    assert "permissions mode bypass" in stderr  # warned of, once


def test_a_capitalised_tool_name_in_a_rule_still_denies(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text("permissions:\n  allow: [bash]\n  deny: ['Bash(rm *)']\n")
    (tmp_path / "victim").write_text("keep me\n")
    server = one_call(model_server, "bash", {"command": "rm victim"})
    run(server, cli_env, tmp_path)
    assert (tmp_path / "victim").exists()


def test_a_command_with_a_carriage_return_is_asked_about_even_under_allow_all(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text("permissions:\n  allow: [bash]\n")
    server = one_call(model_server, "bash", {"command": "touch made\r echo harmless"})
    events, _ = run(server, cli_env, tmp_path)
    assert not (tmp_path / "made").exists()
    assert "U+000D" in decisions(events)[0]["reason"]


def test_a_tool_the_model_made_up_is_denied_in_ci_saying_it_is_not_registered(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text("permissions:\n  allow: [bash]\n")
    server = one_call(model_server, "deploy_to_prod", {})
    events, _ = run(server, cli_env, tmp_path)
    (decision,) = decisions(events)
    assert decision["decision"] == "deny"
    assert "'deploy_to_prod' is not a registered tool" in decision["reason"]


def test_rules_for_a_plugin_left_out_of_the_run_stop_it(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A CI job's DSH_LOAD_PLUGINS that forgets `permissions` must not run unguarded."""
    (tmp_path / "dsh.yml").write_text("permissions:\n  deny: ['bash(rm *)']\n")
    server = one_call(model_server, "bash", {"command": "rm -rf ."})
    # a list that names none of the installed plugins (each plugin set installs others)
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", "go", env=env, cwd=tmp_path, stdin="")
    assert done.returncode == 2
    assert f"{tmp_path}/dsh.yml:1:1: permissions: section 'permissions'" in done.stderr
    assert server.bodies() == []


# -- 5. the decision event ------------------------------------------------------------------


def test_each_call_has_one_decision_event_between_its_call_and_its_result(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text(DENY_RM)
    server = one_call(model_server, "bash", {"command": "echo a && rm -f b"})
    events, _ = run(server, cli_env, tmp_path)
    kinds = [e["type"] for e in events if e["type"].startswith(("tool/", "permission/"))]
    assert kinds == ["tool/call", "permission/decision", "tool/result"]
    (decision,) = decisions(events)
    assert {"tool", "call_id", "turn", "step", "decision", "mode", "rule", "reason"} <= set(
        decision
    )
    assert [(p["kind"], p["value"], p["decision"]) for p in decision["parts"]] == [
        ("command", "echo a", "allow"),
        ("command", "rm -f b", "deny"),
    ]


# -- 6. bad rules stop dsh, naming the file, the key and what is wrong ----------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "permissions:\n  deny:\n    - bsah(rm *)\n",
            "dsh.yml:3:7: permissions.deny[0]: rule 'bsah(rm *)' names no tool; "
            "did you mean 'bash'?",
        ),
        (
            "agents:\n  - id: main\n    options:\n      permissions:\n"
            "        deny: ['bsah(rm *)']\n",
            "dsh.yml:5:16: agents[0].options.permissions.deny[0]: rule 'bsah(rm *)' names no "
            "tool; did you mean 'bash'?",
        ),
        (
            "permissions:\n  allow:\n    - bash(echo: hi)\n",
            "dsh.yml:3:7: permissions.allow[0]: a rule is text, but YAML read this one as a "
            "mapping ('bash(echo: hi)': ': ' starts a value); quote the rule",
        ),
        (
            "permissions:\n  allow:\n    - bash(git status\n",
            "dsh.yml:3:7: permissions.allow[0]: 'bash(git status': the pattern must end with ')'",
        ),
        ("permissions:\n  alow: [bash]\n", "dsh.yml:2:3: permissions.alow: unknown key"),
        ("permissions:\n  deny: bash(rm *)\n", "dsh.yml:2:3: permissions.deny: Input should be"),
        ("permissions:\n  mode: yolo\n", "dsh.yml:2:3: permissions.mode: Input should be"),
        ("permisions:\n  deny: [bash]\n", "did you mean 'permissions'?"),
    ],
)
def test_a_bad_rule_stops_dsh_naming_the_file_the_key_and_the_problem(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, text: str, expected: str
) -> None:
    """The misspelt tool name used to be reported without the file and line; the rule
    YAML reads as a mapping used to say only "Input should be a string"."""
    (tmp_path / "dsh.yml").write_text(text)
    server = one_call(model_server, "bash", {"command": "echo never"})
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", "go", env=cli_env, cwd=tmp_path, stdin="")
    assert done.returncode != 0
    assert f"{tmp_path}/{expected}" in done.stderr or (
        expected.startswith("did") and expected in done.stderr
    ), done.stderr
    assert server.bodies() == []  # stopped before the model was asked


# -- 7. a tool of a third-party plugin -------------------------------------------------------

DEPLOY_PLUGIN = '''
from dsh import hookimpl
from dsh.tools import tool


@tool(mutating=True)
def deploy(target: str) -> str:
    """Deploy."""
    open("deployed.txt", "w").write(target)
    return "deployed " + target


@hookimpl
def register_tools(register):
    register(deploy)
'''


@pytest.mark.parametrize(
    ("rules", "decision", "reason"),
    [
        # the tool declares no path or command argument: a deny pattern is taken to match
        ("deny: ['deploy(staging)']", "deny", "the pattern is taken to match"),
        # and an allow pattern never matches (asked; in CI denied)
        ("allow: ['deploy(prod)']", "deny", "no rule allows calling 'deploy'"),
        ("allow: [deploy]", "allow", "the rule 'allow: deploy' allows"),
    ],
)
def test_a_third_party_tool_is_ruled_by_name(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    rules: str,
    decision: str,
    reason: str,
) -> None:
    # installed as a third party would be: a distribution with a `dsh` entry point
    site = tmp_path / "site"
    info = site / "dsh_deploy-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "dsh_deploy.py").write_text(DEPLOY_PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-deploy\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[dsh]\ndeploy = dsh_deploy\n")
    (tmp_path / "dsh.yml").write_text(f"permissions:\n  {rules}\n")
    env = {**cli_env, "PYTHONPATH": os.pathsep.join([str(site), cli_env.get("PYTHONPATH", "")])}
    env["DSH_LOAD_PLUGINS"] = "deploy,permissions"
    server = one_call(model_server, "deploy", {"target": "prod"})
    events, _ = run(server, env, tmp_path)
    (event,) = decisions(events)
    assert event["decision"] == decision
    assert reason in event["reason"]
    assert (tmp_path / "deployed.txt").exists() == (decision == "allow")


# -- 8. a person answers "always" ------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals")
def test_always_allows_the_same_command_again_and_asks_about_another(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server(
        [
            tool_call_reply("bash", {"command": "echo same-output"}, "c1"),
            tool_call_reply("bash", {"command": "echo same-output"}, "c2"),
            tool_call_reply("bash", {"command": "echo other-output"}, "c3"),
            text_reply("Done."),
        ]
    )
    model = f"openai-compatible:tiny@{server.url}"
    child = in_terminal("-m", model, "run", "go", env=cli_env, cwd=tmp_path)
    child.expect_exact("a = always (for this session: command echo same-output")
    child.sendline("a")
    child.expect_exact("? bash(")  # the next question is about the other command
    child.expect_exact("for this session: command echo other-output")
    child.sendline("no, not that one")
    child.expect_exact("Done.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    transcript = child.logfile_read.getvalue()
    assert transcript.count("allow? y = once") == 2  # c2 was not asked about
    assert "same-output" in seen_by_model(server, 2)
    assert "no, not that one" in seen_by_model(server, 3)
