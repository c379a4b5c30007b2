"""Bash builtins that run a string as code (``trap``, ``mapfile -C``, array subscripts,
``hash -p``, aliases, ``declare -i``) and shells or ``source`` reading their script
from their input (``/dev/stdin``): none gets past a deny rule or an allow-listed
harmless builtin. Each row runs one ``bash`` call through the real dispatcher (see
conftest ``judge``); two run end to end through the loop and the real bash tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import dsh_permissions
from dsh.testing import ScriptedModel, run_turn, scripted_harness, tool_calls

pytestmark = pytest.mark.plugins("permissions")

DENY_RM: dict[str, Any] = {"allow": ["bash"], "deny": ["bash(rm *)"]}
DENY_READ: dict[str, Any] = {"allow": ["bash"], "deny": ["read(.env)"]}
BYPASS: dict[str, Any] = {"deny": ["bash(rm *)"]}

# what runs rm: denied by the rule, or asked about when the analysis cannot see it
EVALUATED = [
    ("trap-exit", "trap 'rm victim' EXIT", "deny"),
    ("trap-end-of-options", "trap -- 'rm victim' INT TERM", "deny"),
    ("trap-dynamic", 'trap "$X" EXIT', "ask"),
    ("mapfile-callback", "mapfile -C 'rm victim #' -c 1 a <<< x", "deny"),
    ("readarray-callback-after-option", "readarray -u 0 -C 'rm victim #' a", "deny"),
    ("mapfile-callback-runs-its-input", "mapfile -c 1 -Ceval a <<< 'rm victim'", "ask"),
    ("let-subscript", "let 'a[$(rm victim)]'", "ask"),
    ("test-v-subscript", "test -v 'a[$(rm victim)]'", "ask"),
    ("bracket-v-subscript", "[ -v 'a[$(rm victim)]' ]", "ask"),
    ("printf-v-subscript", "printf -v 'a[$(rm victim)]' x", "ask"),
    ("declare-subscript", "declare 'a[$(rm victim)]=1'", "ask"),
    ("typeset-subscript", "typeset 'a[$(rm victim)]=1'", "ask"),
    ("local-subscript", "local 'a[$(rm victim)]=1'", "ask"),
    ("readonly-subscript", "readonly 'a[$(rm victim)]=1'", "ask"),
    ("export-subscript", "export 'a[$(rm victim)]=1'", "ask"),
    ("read-subscript", "read 'a[$(rm victim)]' < /dev/null", "ask"),
    ("unset-subscript", "unset 'a[$(rm victim)]'", "ask"),
    ("wait-subscript", "wait -p 'a[$(rm victim)]'", "ask"),
    ("getopts-subscript", "getopts a 'a[$(rm victim)]'", "ask"),
    ("builtin-wrapped-subscript", "builtin test -v 'a[$(rm victim)]'", "ask"),
    ("subscript-assignment", "a['$(rm victim)']=1", "ask"),
    ("assigned-then-evaluated", "x='a[$(rm victim)]'; [[ x -eq 1 ]]", "ask"),
    ("env-assigned", "env x='a[$(rm victim)]' bash -c '[[ x -eq 1 ]]'", "ask"),
    ("declare-i", "declare -i x; x='a[$(rm victim)]'", "ask"),
    ("declare-ai", "declare -ai x", "ask"),
    ("local-i", "local -i x", "ask"),
    ("hash-p", "hash -p /usr/bin/rm ls; ls victim", "ask"),
    ("hash-rp", "hash -rp /usr/bin/rm ls", "ask"),
    ("bash-cmds-declare", "declare 'BASH_CMDS[ls]=/usr/bin/rm'; ls victim", "ask"),
    ("bash-cmds-printf-v", "printf -v 'BASH_CMDS[ls]' /usr/bin/rm; ls victim", "ask"),
    (
        "bash-cmds-nameref",
        "declare -n r=BASH_CMDS; printf -v 'r[ls]' /usr/bin/rm; ls victim",
        "ask",
    ),
    ("fc-editor", "set -o history\necho x\nfc -e 'rm victim #' -1", "ask"),
    ("bash-env-stdin", "BASH_ENV=/dev/stdin bash -c true <<< 'rm victim'", "ask"),
    ("exported-function", "env 'BASH_FUNC_ls%%=() { rm victim; }' bash -c ls", "ask"),
    ("ps4-trace", "PS4='$(rm victim)'; set -x; true", "ask"),
    ("alias", "shopt -s expand_aliases; alias ls=rm", "ask"),
    ("expand-aliases", "shopt -s expand_aliases", "ask"),
    ("enable", "enable -f ./x.so x", "ask"),
    # finding 3: the script is the shell's input
    ("source-stdin", "source /dev/stdin <<< 'rm victim'", "ask"),
    ("dot-stdin", ". /dev/stdin <<< 'rm victim'", "ask"),
    ("bash-stdin", "printf 'rm victim' | bash /dev/stdin", "ask"),
    ("sh-dash", "printf 'rm victim' | sh -", "ask"),
    ("bash-dev-fd", "bash /dev/fd/3 3<<< 'rm victim'", "ask"),
    ("bash-proc-self-fd", "bash /proc/self/fd/0 <<< 'rm victim'", "ask"),
    ("source-proc-thread-self-fd", "source /proc/thread-self/fd/0 <<< 'rm victim'", "ask"),
    ("bash-stdin-dotted", "bash /dev/./stdin <<< 'rm victim'", "ask"),
    ("bash-stdin-linked-dir", "bash /proc/self/root/dev/stdin <<< 'rm victim'", "ask"),
    ("bash-stdin-relative-after-cd", "cd / && bash dev/stdin <<< 'rm victim'", "ask"),
]

# ordinary uses that stay as they were
SAFE = [
    ("printf", "printf '%s\\n' x"),
    ("printf-v", "printf -v y '%s' x"),
    ("test-f", "test -f file"),
    ("test-v-plain", "test -v HOME"),
    ("bracket", "[ -d src ]"),
    ("read-r", "read -r line < /dev/null"),
    ("declare", "declare x=1"),
    ("declare-a", "declare -a xs"),
    ("export", "export PATH=/usr/bin:/bin"),
    ("unset", "unset x"),
    ("trap-reset", "trap - EXIT"),
    ("trap-list", "trap -p"),
    ("hash-r", "hash -r"),
    ("shopt-other", "shopt -s nullglob"),
    ("mapfile-no-callback", "mapfile -t lines < /dev/null"),
    ("echo-brackets", "echo 'a[1]' '$(x)'"),
    ("ps4-plain", "grep PS4 notes.txt"),
    ("grep-outside-builtins", "grep -F 'a[$(x)]' file"),
    ("bash-script", "bash script.sh"),
    ("source-file", "source env.sh"),
]


@pytest.mark.parametrize(
    ("command", "expected"), [pytest.param(c, e, id=i) for i, c, e in EVALUATED]
)
async def test_code_run_by_builtins_or_from_input_gets_past_no_deny_rule(judge, command, expected):
    judged = await judge(DENY_RM, "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]

    # bypass asks nobody: what cannot be checked against the deny rule is denied
    judged = await judge(BYPASS, "bash", {"command": command}, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("bash(printf *)", "printf -v 'a[$(rm victim)]' x"),
        ("bash(test *)", "test -v 'a[$(rm victim)]'"),
        ("bash([ *)", "[ -v 'a[$(rm victim)]' ]"),
        ("bash(read *)", "read 'a[$(rm victim)]' < /dev/null"),
        ("bash(trap *)", "trap 'rm victim' EXIT"),
        ("bash(source *)", "source /dev/stdin <<< 'rm victim'"),
    ],
)
async def test_an_allow_listed_harmless_builtin_does_not_allow_code(judge, rule, command):
    judged = await judge({"allow": [rule]}, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize("command", ["trap 'cat .env' EXIT", "source /dev/stdin <<< 'cat .env'"])
async def test_read_deny_rules_see_what_trap_runs_or_what_input_is_sourced(judge, command):
    judged = await judge(DENY_READ, "bash", {"command": command})
    assert judged.decision in ("deny", "ask"), judged.event["reason"]


@pytest.mark.parametrize(("command"), [pytest.param(c, id=i) for i, c in SAFE])
async def test_ordinary_builtin_uses_stay_allowed(judge, command):
    judged = await judge(
        {"allow": ["bash(*)"], "deny": ["bash(rm *)"]}, "bash", {"command": command}
    )
    assert judged.decision == "allow", judged.event["reason"]


@pytest.mark.parametrize("mode", ["default", "bypass"])
@pytest.mark.parametrize(
    "command",
    [
        pytest.param("trap 'rm victim' EXIT", id="trap"),
        pytest.param("let 'a[$(rm victim)]'", id="let-subscript"),
        pytest.param("hash -p /usr/bin/rm ls; ls victim", id="hash-p"),
        pytest.param("source /dev/stdin <<< 'rm victim'", id="source-stdin"),
        pytest.param("printf 'rm victim' | bash /dev/stdin", id="bash-stdin"),
        pytest.param("compgen -W '$(rm victim)' x", id="compgen-word-list"),
        pytest.param("read x <<< 'a[$(rm victim)]'; let x", id="let-read-value"),
        pytest.param("bash --rcfile /dev/stdin -i -c true <<< 'rm victim'", id="rcfile-stdin"),
        pytest.param("bash ~/../dev/stdin <<< 'rm victim'", id="bash-stdin-by-home"),
    ],
)
async def test_the_real_bash_tool_removes_nothing_through_builtins(
    tmp_path: Path, command: str, mode: str
):
    (tmp_path / "victim").write_text("keep me")
    rules: dict[str, Any] = {"mode": mode, "deny": ["bash(rm *)"]}
    if mode == "default":
        rules["allow"] = ["bash"]
    model = ScriptedModel([tool_calls(("bash", {"command": command})), "done"])
    config = "models: {scripted: {provider: scripted}}\n"
    plugins = [("permissions", dsh_permissions)]  # the real bash tool is built in
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, config_text=config, workspace=tmp_path
    ) as harness:
        options = {"model": "scripted", "permissions": rules}
        agent = await harness.agents.create("a", options=options)
        events = await run_turn(agent, "go")
    (decision,) = [e.data for e in events if e.type == "permission/decision"]
    assert decision["decision"] == "deny", decision["reason"]
    assert (tmp_path / "victim").exists()
