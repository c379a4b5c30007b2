"""Where bash really evaluates a word as code, and only there: ``compgen -C``/``-W``, a
value the line filled in before and then evaluates (``read x <<< ...; let x``), a
shell's ``--rcfile``/``--init-file``/``ENV`` that is its input, ``~/../dev/stdin``; and
the ordinary commands that merely look alike (``echo "\\e[31m"``, ``git commit -m
"x=[1]"``, ``PS4='+ '``) stay allowed. See test_permissions_evaluated for the rest."""

from __future__ import annotations

import time
from typing import Any

import pytest
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

DENY_RM: dict[str, Any] = {"allow": ["bash"], "deny": ["bash(rm *)"]}
ALLOW_ALL: dict[str, Any] = {"allow": ["bash(*)"], "deny": ["bash(rm *)"]}
BYPASS: dict[str, Any] = {"deny": ["bash(rm *)"]}
VALUE = "x <<< 'a[$(rm victim)]'"

# what runs rm (checked with bash 5.2): denied by the rule, or asked about
EVALUATED = [
    ("compgen-command", "compgen -C 'rm victim' x", "deny"),
    ("compgen-word-list", "compgen -W '$(rm victim)' x", "deny"),
    ("compgen-function-alone", "compgen -F f x", "ask"),
    ("read-then-let", f"read {VALUE}; let x", "ask"),
    ("mapfile-then-let", f"mapfile -t {VALUE}; let x", "ask"),
    ("printf-v-then-let", "printf -v x 'a[%s(rm victim)]' '$'; let x", "ask"),
    ("read-then-test-v", f"read {VALUE}; test -v 'a[x]'", "ask"),
    ("read-then-bracket-v", f"read {VALUE}; [ -v 'a[x]' ]", "ask"),
    ("read-then-printf-v", f"read {VALUE}; printf -v 'a[x]' q", "ask"),
    ("read-then-read", f"read {VALUE}; read 'a[x]' <<< q", "ask"),
    ("read-then-declare", f"read {VALUE}; declare 'a[x]=1'", "ask"),
    ("read-then-unset", f"read {VALUE}; a=(1); unset 'a[x]'", "ask"),
    ("read-then-unset-dollar", f'read {VALUE}; a=(1); unset "a[$x]"', "ask"),
    ("read-then-assign", f"read {VALUE}; a[x]=1", "ask"),
    ("read-then-expand", f'read {VALUE}; echo "${{a[x]}}"', "ask"),
    ("read-then-double-bracket", f"read {VALUE}; [[ x -eq 1 ]]", "ask"),
    ("let-plain", "let i++", "ask"),
    ("rcfile-stdin", "bash --rcfile /dev/stdin -i -c true <<< 'rm victim'", "ask"),
    ("init-file-stdin", "bash --init-file /dev/stdin -i -c true <<< 'rm victim'", "ask"),
    ("env-stdin", "ENV=/dev/stdin sh -i -c true <<< 'rm victim'", "ask"),
    ("env-exported", "export ENV=/dev/stdin; sh -i -c true <<< 'rm victim'", "ask"),
    ("bash-stdin-by-home", "bash ~/../dev/stdin <<< 'rm victim'", "ask"),
    ("source-stdin-by-home", "source ~/../dev/stdin <<< 'rm victim'", "ask"),
    ("ps4-substitution", "PS4='+ $(rm victim) ' bash -x -c true", "ask"),
    ("ps4-exported", "export PS4='${a[$(rm victim)]}'; set -x; true", "ask"),
    ("ps4-subscript", f"read {VALUE}; PS4='${{a[x]}}' bash -x -c true", "ask"),
    ("ps4-prompt-expansion", "PS4='${x@P}' bash -x -c true", "ask"),
    ("bash-env-env", "env BASH_ENV=/dev/stdin bash -c true <<< 'rm victim'", "ask"),
    ("export-function", "export 'BASH_FUNC_ls%%=() { rm victim; }'; sh -c ls", "ask"),
    ("mapfile-callback-missing", "mapfile -C", "ask"),
    ("read-bash-cmds", "read 'BASH_CMDS[ls]' <<< /usr/bin/rm; ls victim", "ask"),
    ("alias-definition", "alias ls=rm", "ask"),
    ("enable-name", "enable -n test", "ask"),
]

# ordinary commands that merely look like the above; each was asked about before
ORDINARY = [
    ("echo-backtick", 'echo "arr[0] is set by \\`init\\`"'),
    ("echo-colour", 'echo -e "\\e[31mRun \\`make\\`\\e[0m"'),
    ("printf-format", "printf '\\033[1m%s\\033[0m $(cmd)\\n' x"),
    ("cd", "cd 'dir[$(x)]'"),
    ("colon", ": 'a[$(x)] note'"),
    ("type", "type 'a[$(x)]'"),
    ("help", "help 'a[$(x)]'"),
    ("true", "true 'a[$(x)]'"),
    ("command-v", "command -v 'a[$(x)]'"),
    ("python-list", "python3 -c 'x=[1,2]; print(x[0], `1`)'"),
    ("git-message", 'git commit -m "x=[1] uses \\`y\\`"'),
    ("docker-env", "docker run -e 'CMD=[$(x)]' img"),
    ("echo-hook-name", "echo 'PS4 is the trace prompt'"),
    ("unset-hook", "unset BASH_ENV"),
    ("export-n-hook", "export -n BASH_ENV"),
    ("ps4-plain", "PS4='+ ' bash -x script.sh"),
    ("ps4-plain-expansions", "PS4='+ ${BASH_SOURCE}:${LINENO}: ' bash -x script.sh"),
    ("bash-env-cleared", "env BASH_ENV= bash -c true"),
    ("env-setting", "ENV=production npm start"),
    ("enable-list", "enable -a"),
    ("alias-list", "alias -p"),
    ("read-prompt", "read -rp 'Continue [y/n]? ' answer < /dev/null"),
    # bash 5.2 takes these for plain numbers: nothing runs
    ("test-eq", "test 'a[`rm victim`]' -eq 1"),
    ("printf-d", 'printf %d "a[\\$(rm victim)]"'),
    ("shift", "shift 'a[$(rm victim)]'"),
    ("wait", "wait 'a[$(rm victim)]'"),
]


@pytest.mark.parametrize(
    ("command", "expected"), [pytest.param(c, e, id=i) for i, c, e in EVALUATED]
)
async def test_what_bash_evaluates_gets_past_no_deny_rule(judge, command, expected):
    judged = await judge(DENY_RM, "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]
    judged = await judge(BYPASS, "bash", {"command": command}, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "export CDPATH=/; cd etc && cat passwd",
        "CDPATH=/ cd etc && cat passwd",
        "declare -x CDPATH=/; cd etc; cat passwd",
        "read CDPATH <<< /; cd etc; cat passwd",
    ],
)
async def test_a_line_setting_cdpath_is_asked_about(judge, command):
    """With CDPATH set, ``cd etc`` goes to /etc, not ./etc, where the check reads the
    later commands: ``cat passwd`` got past ``deny: bash(cat /etc/*)``."""
    rules = {"allow": ["bash"], "deny": ["bash(cat /etc/*)"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision in ("deny", "ask"), judged.event["reason"]
    await allowed(judge, {"allow": ["bash"]}, "unset CDPATH; cd etc")


@pytest.mark.parametrize("command", ["compgen -C 'cat .env' x", "compgen -W '$(cat .env)' x"])
async def test_read_deny_rules_see_what_compgen_runs(judge, command):
    judged = await judge({"allow": ["bash"], "deny": ["read(.env)"]}, "bash", {"command": command})
    assert judged.decision in ("deny", "ask"), judged.event["reason"]


@pytest.mark.parametrize(("command"), [pytest.param(c, id=i) for i, c in ORDINARY])
async def test_commands_that_only_look_evaluated_stay_allowed(judge, command):
    await allowed(judge, ALLOW_ALL, command)
    await allowed(judge, BYPASS, command, mode="bypass")


@pytest.mark.xfail(strict=True, reason="ENV naming a file relative to a directory cd moved to")
async def test_env_relative_to_a_moved_directory(judge):
    command = "cd /dev && ENV=stdin sh -i -c true <<< 'rm victim'"
    judged = await judge(DENY_RM, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    "sink",
    [
        # asked since session 34 (F4): a first word only the shell knows may be any
        # program, so what it reads is unknown
        pytest.param("a[x]=1", id="assignment"),
        # asked since session 35 (rev35perm A3): a subscript that is no number
        pytest.param('echo "${a[x]}"', id="expansion"),
    ],
)
async def test_subscript_sinks_outside_builtins_past_a_read_rule(judge, sink):
    """Without a deny pattern for bash, nothing makes these words (only known when the
    shell runs) asked about: bash evaluates x, and runs the $(...) its value holds."""
    command = f"read x <<< 'a[$(cat .env >&2)]'; {sink}"
    judged = await judge({"allow": ["bash"], "deny": ["read(.env)"]}, "bash", {"command": command})
    assert judged.decision in ("deny", "ask"), judged.event["reason"]


@pytest.mark.parametrize("prefix", ["x=", "test -v ", "printf -v y "])
async def test_a_long_bracketed_word_is_judged_in_linear_time(judge, prefix):
    """A JSON array echoed into a file: as quick as a plain word of its length (the
    regex that looked for a subscript took seconds on it, blocking the event loop)."""

    async def seconds(word: str) -> float:
        start = time.perf_counter()
        await judge(ALLOW_ALL, "bash", {"command": f"{prefix}'{word}'"})
        return time.perf_counter() - start

    n = 50_000
    await seconds("a")  # warm up
    plain = min([await seconds("a" * n) for _ in range(2)])
    bracketed = min([await seconds("[" * n) for _ in range(2)])
    assert bracketed < 20 * plain


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("let 'a[$(cat .env >&2)]'", id="let-subscript"),
        pytest.param("(( $(cat .env >&2) ))", id="arithmetic"),
        pytest.param("bash <<< 'cat .env'", id="script-from-input"),
    ],
)
async def test_bypass_with_read_deny_rules_alone_denies_what_it_cannot_check(judge, command):
    """Was: allowed, as bypass denied what it could not check only against the bash
    tool's own deny rules; what such a command reads cannot be checked against a read
    deny rule either."""
    judged = await judge({"deny": ["read(.env)"]}, "bash", {"command": command}, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]
    assert "read(.env)" in judged.event["reason"]


@pytest.mark.parametrize(
    ("command", "named", "unnamed"),
    [
        ("CDPATH=/ cd etc && cat passwd", "CDPATH", "BASH_ENV"),
        ("export CDPATH=/; cd etc", "CDPATH", "PS4"),
        ("read CDPATH <<< /; cd etc", "CDPATH", "BASH_CMDS"),
        ("BASH_ENV=x.sh bash -c true", "BASH_ENV", "CDPATH"),
        ("PS4='$(id)' bash -xc true", "PS4", "CDPATH"),
        ("declare -n r=BASH_CMDS", "BASH_CMDS", "CDPATH"),
        ("env 'BASH_FUNC_ls%%=() { id; }' bash -c ls", "BASH_FUNC_ls%%", "CDPATH"),
        ("CDPATH=/ BASH_ALIASES[x]=id cd etc", "CDPATH and BASH_ALIASES", "PS4"),
    ],
)
async def test_the_question_names_only_the_hook_variables_the_line_sets(
    judge, command, named, unnamed
):
    """The reason listed every hook variable (BASH_CMDS, BASH_ALIASES, BASH_ENV, ENV,
    PS4, CDPATH, BASH_FUNC_) for a line that set one of them."""
    judged = await judge({"allow": ["bash"]}, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    reason = judged.requests[0].reason
    assert f"it sets {named}" in reason and unnamed not in reason, reason
