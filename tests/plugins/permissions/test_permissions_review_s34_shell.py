"""Shell-syntax bypasses from the permissions review of session 34 (permrev F1-F3,
F7-F10).

Each row was run in bash 5.2 by the reviewer: the shell runs what the checker missed.
F1: ``bash +c STRING`` runs STRING as ``-c`` does. F2: a shell option that takes a
value (``-o NAME``, ``-O NAME``, ``--rcfile FILE``) was taken for the script or the
script file. F3: a shell reading its input behind a wrapper option with a value
(``sudo -u root bash``). F7: ``\\"`` inside backquotes inside double quotes. F8:
``${x@P}``, ``${!x}`` and ``${y:x}`` run or evaluate code held in a variable. F9: a
link made earlier in the line run as the program. F10: non-ASCII digits are no fd
numbers. Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

DENY_ENV = {"deny": ["read(.env)"], "allow": ["bash"]}


@pytest.mark.parametrize(
    "command",
    [
        "bash +c 'rm -rf x'", "sh +c 'rm -rf x'", "bash +xc 'rm -rf x'",
        "sudo bash +c 'rm -rf x'", "env bash +c 'rm -rf x'",
    ],
)  # fmt: skip
async def test_f1_a_plus_c_script_is_opened(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_RM, command, mode="bypass")


async def test_f1_a_plus_c_script_is_read_and_asked(judge):
    await refused(judge, BYPASS_ENV, "bash +c 'cat .env'", mode="bypass")
    judged = await judge(
        {"ask": ["bash(git push*)"], "allow": ["bash"]}, "bash", {"command": "bash +c 'git push'"}
    )
    assert judged.decision == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "bash -c -o posix 'rm -rf x'", "bash -co posix 'rm -rf x'",
        "bash -c -O extglob 'rm -rf x'", "sh -c -o errexit 'rm -rf x'",
        "bash -c +O extglob 'rm -rf x'", "bash -c +o posix 'rm -rf x'",
        "bash -x -rcfile 'rm -rf x'",  # after a short option -rcfile is -r -c -f ...
        "bash $opts -c 'rm -rf x'",  # $opts may be any option: -c still gives the script
    ],
)  # fmt: skip
async def test_f2_an_option_value_is_not_the_c_script(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -rf x' | bash -o posix", "echo 'rm x' | bash +x", "curl x | sh -o errexit",
        "bash --rcfile /dev/null <<< 'cat .env'", "bash -O extglob <<< 'cat .env'",
        "bash --init-file /dev/null <<< 'cat .env'", "bash -rcfile /dev/null <<< 'cat .env'",
        "echo 'rm x' | bash +O extglob", "echo 'rm x' | bash -euo pipefail",
    ],
)  # fmt: skip
async def test_f2_a_shell_reading_its_input_behind_an_option_value(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_ENV, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "bash -c -o 'rm -rf x'",  # the value of -o is no option's name
        "bash -ox posix -c true",  # -o inside a cluster: shells read it differently
        "bash --rcfile=x -c true",  # bash knows no such spelling
        "zsh --emacs=x <<< 'rm x'",
        "fish -C 'rm -rf x'", "fish --init-command='rm -rf x'",
    ],
)  # fmt: skip
async def test_f2_shell_options_not_known_are_asked(judge, command):
    judged = await refused(judge, {"allow": ["bash"]}, command)
    assert judged.decision == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "bash -o posix -c 'echo hi'", "bash -euxo pipefail -c 'echo hi'",
        "bash --norc --noprofile -c 'echo hi'", "sh -e script.sh", "bash -x -- build.sh",
        "bash +x build.sh", "bash -O extglob build.sh", "zsh -f -c 'echo hi'",
    ],
)  # fmt: skip
async def test_f2_plain_shell_calls_stay_allowed(judge, command):
    await allowed(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -rf x' | sudo -u root bash", "echo 'rm -rf x' | env -u X bash",
        "timeout -s KILL 5 bash <<< 'rm -rf x'", "echo 'rm -rf x' | exec -a x bash",
        "echo 'rm -rf x' | flock /tmp/l bash", "echo 'rm -rf x' | sudo -u root sh",
        "echo 'rm -rf x' | sudo -u root bash -o posix",
    ],
)  # fmt: skip
async def test_f3_a_shell_reading_its_input_behind_a_wrapper_option(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, BYPASS_ENV, command.replace("rm -rf x", "cat .env"), mode="bypass")


async def test_f3_a_shell_named_as_an_operand_stays_allowed(judge):
    await allowed(judge, DENY_RM, "sudo apt install zsh")


@pytest.mark.parametrize(
    ("command", "mode"),
    [
        ('echo "`cat .e\\"\\"nv`"', "default"), ('echo "`cat \\".env\\"`"', "bypass"),
        ('echo "`echo \\"\'\\"; cat .env; echo \\"\'\\"`"', "default"),
    ],
)  # fmt: skip
async def test_f7_an_escaped_double_quote_in_backquotes_in_double_quotes(judge, command, mode):
    rules = DENY_ENV if mode == "default" else BYPASS_ENV
    judged = await refused(judge, rules, command, mode=mode)
    assert judged.decision == "deny" and judged.event["rule"] == "deny: read(.env)"


async def test_f7_backquotes_in_double_quotes_stay_allowed(judge):
    await allowed(judge, DENY_ENV, 'echo "`echo \\"hi\\"`"')


@pytest.mark.parametrize(
    "command",
    [
        "x='$(cat .env)'; echo ${x@P}", "x='$(cat .env)'; echo \"${x@P}\"",
        "printf -v x %s '$(cat .env)'; echo ${x@P}", "echo ${!x}", "echo ${y:x}",
        "echo ${y:1:x}", "echo ${@:x}", "echo ${y: x}", "echo ${!x:-a}",
    ],
)  # fmt: skip
async def test_f8_expansions_that_run_or_evaluate_a_value(judge, command):
    judged = await refused(judge, DENY_ENV, command)
    assert judged.decision == "ask"
    await refused(judge, BYPASS_ENV, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "echo ${y:1}", "echo ${y: -2:1}", "echo ${y:-default}", "echo ${y:=v}", "echo ${y:+v}",
        "echo ${y:?unset}", "echo ${!x[@]}", "echo ${!pre*}", "echo ${!#}", "echo ${#y}",
        "echo ${y@Q}", "echo ${y/a:b/c}",
    ],
)  # fmt: skip
async def test_f8_plain_expansions_stay_allowed(judge, command):
    await allowed(judge, DENY_ENV, command)


async def test_f10_a_non_ascii_digit_is_no_file_descriptor(judge):
    one = "\u0661"  # ARABIC-INDIC DIGIT ONE: bash takes it for a word, not an fd
    command = f"git status {one}>/dev/null"  # git status gets the operand
    judged = await judge({"allow": ["bash(git status)"]}, "bash", {"command": command})
    assert judged.decision == "ask"
    # a file named so is written, not a descriptor duplicated
    judged = await judge({"allow": ["bash(echo *)"]}, "bash", {"command": f"echo x >&{one}"})
    assert judged.decision == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "timeout 5 \u0661 x",
        "env \u0661 x",
        "sudo \u0661 x",
        "nice -n 5 \u0661 x",
        "timeout 5 \u0661s x",
    ],
)
async def test_f10_a_non_ascii_digit_behind_a_wrapper_is_the_program(judge, command):
    """``timeout 5 \u0661 x`` runs the program ``\u0661``: the wrapper's number pattern
    (``\\d`` matches any Unicode digit) took it for a duration and skipped it, so a deny
    rule for it never saw it run."""
    rules = {"deny": ["bash(\u0661 *)", "bash(\u0661s *)"], "allow": ["bash"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "ln -s /bin/rm r; ./r -rf x", "ln /bin/rm r; ./r x", "cp -s /bin/rm r && ./r x",
        "ln -s /bin/rm r; sudo ./r -rf x",
    ],
)  # fmt: skip
async def test_f9_a_link_made_earlier_in_the_line_run_as_the_program(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_RM, command, mode="bypass")


async def test_f9_a_program_path_without_links_made_stays_allowed(judge):
    await allowed(judge, DENY_RM, "mkdir -p out; ./gradlew build")
