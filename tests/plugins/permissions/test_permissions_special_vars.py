"""bash gives RANDOM, SRANDOM, OPTIND, HISTCMD and SECONDS the integer attribute, so it
evaluates a value assigned to one as arithmetic at once: a subscript holding ``$( )``
in the value (``printf -v RANDOM %s 'a[$(CMD)]'``), or a variable named in it whose
value holds one (``read x < notes.txt; RANDOM=x``), runs a command. Setting one is
treated as ``let``: asked about, and in bypass mode denied when there are deny rules.
Rows run one ``bash`` call through the real dispatcher (conftest ``judge``); the rest
run end to end through the loop and the real bash tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh_permissions
from dsh.testing import ScriptedModel, run_turn, scripted_harness, tool_calls

pytestmark = pytest.mark.plugins("permissions")

DENY_RM: dict[str, Any] = {"allow": ["bash"], "deny": ["bash(rm *)"]}
BYPASS: dict[str, Any] = {"deny": ["bash(rm *)"]}

SETS = [
    "printf -v RANDOM %s 'a[$(rm victim)]'",
    "printf -v OPTIND %s 'a[$(rm victim)]'",
    "printf -v SRANDOM 'a[$(rm victim)]'",
    "printf -v HISTCMD %s 'a[$(rm victim)]'",
    "printf -v SECONDS %s 'a[$(rm victim)]'",
    "printf -v 'RANDOM[0]' %s 'a[$(rm victim)]'",
    "read RANDOM <<< 'a[$(rm victim)]'",
    "read -a OPTIND <<< 'a[$(rm victim)]'",
    "mapfile OPTIND < notes.txt",
    "readarray -t HISTCMD < notes.txt",
    "wait -p RANDOM",
    "getopts ab OPTIND",
    "read x < notes.txt; RANDOM=x",
    "read x < notes.txt; OPTIND+=x",
    "read x < notes.txt; export OPTIND=x",
    "read x < notes.txt; declare SRANDOM=x",
    "read x < notes.txt; local HISTCMD=x",
    "read x < notes.txt; readonly RANDOM=x",
    "read x < notes.txt; typeset OPTIND=x",
    "read x < notes.txt; env RANDOM=x bash -c true",
    'RANDOM="$x"',
    "declare -n r=RANDOM; read r < notes.txt",
    "declare -n r; r=RANDOM; read x < notes.txt; r=x",
    "local -n r; r=OPTIND; read r < notes.txt",
]

SAFE = [
    "RANDOM=42",
    "OPTIND=1",
    "export OPTIND=1",
    "local OPTIND",
    "declare -p RANDOM",
    "read -r x < notes.txt",
    "printf -v x %s 'a[1]'",
]


@pytest.mark.parametrize("command", SETS)
async def test_setting_a_variable_bash_evaluates_gets_past_no_deny_rule(judge, command):
    judged = await judge(DENY_RM, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]

    judged = await judge(BYPASS, "bash", {"command": command}, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize("command", SETS[:1])
async def test_an_allow_listed_printf_does_not_allow_it(judge, command):
    judged = await judge({"allow": ["bash(printf *)"]}, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize("command", SAFE)
async def test_plain_uses_stay_allowed(judge, command):
    judged = await judge(
        {"allow": ["bash(*)"], "deny": ["bash(rm *)"]}, "bash", {"command": command}
    )
    assert judged.decision == "allow", judged.event["reason"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _run(ws: Path, calls: list[tuple[str, dict[str, Any]]], rules: dict[str, Any]):
    model = ScriptedModel([*(tool_calls(c) for c in calls), "done"])
    config = "models: {scripted: {provider: scripted}}\n"
    async with scripted_harness(
        model,
        plugins=[("permissions", dsh_permissions)],
        load_entry_points=False,
        config_text=config,
        workspace=ws,
    ) as harness:
        options = {"model": "scripted", "permissions": rules}
        agent = await harness.agents.create("a", options=options)
        with anyio.fail_after(20):
            events = await run_turn(agent, "go")
    return [e.data for e in events if e.type == "permission/decision"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "command",
    [
        "printf -v RANDOM %s 'a[$(rm victim)]'",
        "read RANDOM <<< 'a[$(rm victim)]'",
        "read OPTIND < notes.txt",
        "read x < notes.txt; RANDOM=x",
        "read x < notes.txt; export OPTIND=x",
    ],
)
async def test_the_real_bash_tool_removes_nothing(tmp_path: Path, command: str):
    (tmp_path / "victim").write_text("keep me")
    calls = [
        ("write", {"path": "notes.txt", "content": "a[$(rm victim)]\n"}),
        ("bash", {"command": command}),
    ]
    decisions = await _run(tmp_path, calls, {"mode": "bypass", "deny": ["bash(rm *)"]})
    assert (tmp_path / "victim").exists(), [(d["decision"], d["reason"]) for d in decisions]
    assert decisions[-1]["decision"] == "deny", decisions[-1]["reason"]
