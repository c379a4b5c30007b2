"""bash's keyword option (``set -k``, ``set -o keyword``, ``bash -k``): with it on, every
``NAME=value`` word of a command, not only the leading ones, is an assignment put in the
command's environment: ``set -k; git diff GIT_EXTERNAL_DIFF='rm x'`` runs ``rm x``.
From the command that may turn it on, the words of each command are read as bash then
runs them: its assignments first (``GIT_EXTERNAL_DIFF='rm x' git diff``), checked as a
leading assignment is. ``set +k`` does not turn that off (a branch or a subshell may
have left it on). Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

RUNS_RM = "git diff GIT_EXTERNAL_DIFF='rm x'"


@pytest.mark.parametrize(
    "command",
    [
        f"set -k; {RUNS_RM}", f"set -o keyword; {RUNS_RM}", f"set -ek; {RUNS_RM}",
        f"set -k -e; {RUNS_RM}", f"set -e -o keyword; {RUNS_RM}", f"set -eko pipefail; {RUNS_RM}",
        f"eval 'set -k'; {RUNS_RM}", f"set -k; set +k; {RUNS_RM}", f"set -k && {RUNS_RM}",
        "set -k; git log -p GIT_PAGER='rm x'", f"shopt -os keyword; {RUNS_RM}",
        f"shopt -s -o keyword; {RUNS_RM}", f"set $opts; {RUNS_RM}", f"builtin set -k; {RUNS_RM}",
        f"command set -k; {RUNS_RM}", f"sh -c 'set -k'; {RUNS_RM}",
    ],
)  # fmt: skip
async def test_a_watched_variable_after_the_command_is_denied(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "set -k; bash -c true BASH_ENV=./evil", "set -k; sh -c true ENV=./evil",
        "set -k; ls LD_PRELOAD=./x.so", "set -k; ls PERL5OPT=-Mx",
        "set -k; tar xf a.tar TAR_OPTIONS=--to-command=./evil",
        "bash -k -c 'bash -c true BASH_ENV=./evil'", "sh -k -c 'ls LD_PRELOAD=./x.so'",
        "bash -o keyword -c 'ls LD_PRELOAD=./x.so'", "bash -ek -c 'ls LD_PRELOAD=./x.so'",
        "SHELLOPTS=keyword bash -c 'ls LD_PRELOAD=./x.so'",
        "env SHELLOPTS=keyword bash -c 'ls LD_PRELOAD=./x.so'",
        "set -k; sudo ls LD_PRELOAD=./x.so", "set -k; ls HOME=/etc; cat ~/passwd",
    ],
)  # fmt: skip
async def test_an_assignment_anywhere_is_asked_about_as_a_leading_one(judge, command):
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "set -e; git diff GIT_EXTERNAL_DIFF=x", "set -x -o pipefail; ls LD_PRELOAD=x",
        "echo -k; ls LD_PRELOAD=x", "set +k; ls LD_PRELOAD=x",
        "bash -e -c 'bash -c true BASH_ENV=x'", "bash -c 'set -k'; git log",
        "set -k; make CC=gcc", "set -o keyword; git log",
    ],
)  # fmt: skip
async def test_without_it_or_with_plain_variables_the_line_passes(judge, command):
    await allowed(judge, DENY_RM, command)


async def test_keyword_in_dsh_own_shellopts_counts(judge, monkeypatch):
    monkeypatch.setenv("SHELLOPTS", "braceexpand:keyword")
    await refused(judge, DENY_RM, "ls LD_PRELOAD=./x.so")


PREFIXES = [
    "", "set -k; ", "echo set -k; ", "( set -k ); ", "set -k; set +k; ", "set -- -k; ",
    "bash -c 'set -k'; ", "git log -S set -k; ", "grep -rn SHELLOPTS src; ", "echo bash -k; ",
    "git commit -m x set -k; ", "printenv SHELLOPTS; ",
]  # fmt: skip


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("command", ["dd if=.env", "dd if=.env of=/tmp/o", "awk -f x v=1 .env"])
async def test_the_command_as_written_is_still_checked(judge, prefix, command):
    # the moved reading (if=.env dd) is checked in addition to, not instead of, it
    await refused(judge, BYPASS_ENV, prefix + command, mode="bypass")


@pytest.mark.parametrize("prefix", PREFIXES)
async def test_a_deny_rule_on_the_written_order_still_denies(judge, prefix):
    rules = {"deny": ["bash(dd * of=/dev/*)"], "allow": ["bash"]}
    judged = await judge(rules, "bash", {"command": prefix + "dd if=/dev/zero of=/dev/sda"})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "echo set -k; make CC=gcc", "echo 'run: bash -k'; make V=1", "grep -rn SHELLOPTS src",
        "git log -S set -k; make CC=gcc",
        "set -- -k; make CC=gcc", "set -e; make CC=gcc",
    ],
)  # fmt: skip
async def test_a_word_that_only_mentions_the_option_does_not_turn_it_on(judge, command):
    rules = {"allow": ["bash(make *)", "bash(echo *)", "bash(grep *)", "bash(git log *)"]}
    rules["allow"].append("bash(set *)")
    await allowed(judge, rules, command)


@pytest.mark.parametrize(
    "command",
    [
        "export SHELLOPTS; ls LD_PRELOAD=./x.so", "declare -x SHELLOPTS=keyword; ls LD_PRELOAD=x",
        "sudo bash -k -c 'ls LD_PRELOAD=./x.so'", "exec -a x bash -k -c 'ls LD_PRELOAD=x'",
        "env -i bash -k -c 'ls LD_PRELOAD=x'", "set -euo pipefail -k; ls LD_PRELOAD=x",
        "read SHELLOPTS; ls LD_PRELOAD=x", "printf -v SHELLOPTS keyword; ls LD_PRELOAD=x",
    ],
)  # fmt: skip
async def test_the_program_turning_it_on_is_found_behind_wrappers(judge, command):
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        f"set -o -k; {RUNS_RM}", f"set +o -k; {RUNS_RM}", f"set -o -o keyword; {RUNS_RM}",
        f"set -eo -k; {RUNS_RM}", f"set -Eo -k; {RUNS_RM}", f"builtin set -o -k; {RUNS_RM}",
        f"set +o +o -k; {RUNS_RM}",
    ],
)  # fmt: skip
async def test_a_word_after_o_starting_with_a_sign_is_read_as_options(judge, command):
    """bash takes the word after ``-o`` as an option name only when it starts with
    neither ``-`` nor ``+``: ``set -o -k`` lists the options, then turns ``k`` on."""
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    ["set -o -e; ls LD_PRELOAD=x", "set +o -o pipefail; ls LD_PRELOAD=x"],
)
async def test_a_word_after_o_without_k_still_passes(judge, command):
    await allowed(judge, DENY_RM, command)
