"""Shell-syntax findings of the second permissions review of session 34 (permrev2 B5,
B7, O2).

B5: fish's and csh/tcsh's ``-c`` takes the next word and options go on after it
(fish runs every ``-c`` and ``-C``, tcsh the last ``-c``; fish src/fish.cpp, tcsh
sh.c). B7: ``$[x]``, bash's old arithmetic expansion, evaluates x's value as
``$((x))`` does (a subscript in it runs a command): it is refused as ``$((...))`` is,
whatever it holds. O2: behind a wrapper whose options are known (``sudo -E``, ``doas
-n``, ``env -i``) a shell named after the command is one of its arguments, not a shell
reading its input. Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

ALLOW = {"allow": ["bash"]}


@pytest.mark.parametrize(
    "command",
    [
        "fish -c true -c 'rm -rf x'", "fish -c true -C 'rm -rf x'", "fish -C 'rm -rf x'",
        "fish -C 'rm -rf x' -c true", "fish -ic true -c 'rm -rf x'",
        "tcsh -c true -c 'rm -rf x'", "csh -c true -c 'rm -rf x'", "csh -fc true -c 'rm -rf x'",
        "sudo fish -c true -c 'rm -rf x'", "fish $o -c true -c 'rm -rf x'",
    ],
)  # fmt: skip
async def test_b5_every_c_script_of_fish_and_csh_is_opened(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    ["csh -c true -c 'cat .env'", "tcsh -c true -c 'cat .env'", "fish -c true -C 'cat .env'"],
)
async def test_b5_a_later_c_script_is_read(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")


async def test_b5_a_later_c_script_is_asked_about(judge):
    rules = {"ask": ["bash(git push*)"], "allow": ["bash"]}
    judged = await judge(rules, "bash", {"command": "fish -c true -c 'git push'"})
    assert judged.decision == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "fish -c 'ls'", "fish -c ls -c pwd", "fish -C 'set x 1' -c ls", "tcsh -c 'ls'",
        "csh -fc 'ls' a b", "fish -c ls x -c 'rm -rf x'",  # after an operand: $argv
    ],
)  # fmt: skip
async def test_b5_plain_fish_and_csh_calls_stay_allowed(judge, command):
    await allowed(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "printf -v x 'a[\\x24(cat .env >&2)]'; echo $[x]",
        "x=$'a[\\x24(cat .env >&2)]'; echo $[x]",
        "x=$'a[\\x24(cat .env >&2)]'; echo \"$[x]\"",
        "bash -c 'echo $[x]'", "echo $[a[1]]", "echo $[1+$x]", "echo $[1+2]",
    ],
)  # fmt: skip
async def test_b7_old_arithmetic_expansion_is_refused(judge, command):
    await refused(judge, ALLOW, command)
    await refused(judge, BYPASS_ENV, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "echo '$[x]'", "echo \\$[x]", "echo a[1]", "bash -c 'echo \\$[x]'", "echo '$((1+2))'",
        "bash -c 'echo \"\\$[x]\"'",
    ],
)  # fmt: skip
async def test_b7_plain_words_stay_allowed(judge, command):
    await allowed(judge, ALLOW, command)


@pytest.mark.parametrize(
    "command",
    [
        "sudo -E apt-get install -y zsh", "sudo -n apt install fish", "sudo -k apt install zsh",
        "doas -n pkg_add bash", "env -i make bash", "sudo apt install zsh",
        "sudo -E -u root apt install bash", "env -i -u X make bash",
    ],
)  # fmt: skip
async def test_o2_a_shell_named_as_a_wrapped_commands_argument_stays_allowed(judge, command):
    await allowed(judge, ALLOW, command)


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -rf x' | sudo -E bash", "echo 'rm -rf x' | sudo -E -u root bash",
        "echo 'rm -rf x' | sudo -Eu root bash", "echo 'rm -rf x' | env -i bash",
        "echo 'rm -rf x' | doas -n -u root sh", "echo 'rm -rf x' | sudo -u root bash",
        "echo 'rm -rf x' | env -u X bash", "timeout -s KILL 5 bash <<< 'rm -rf x'",
        "echo 'rm -rf x' | sudo --user root bash", "echo 'rm -rf x' | sudo -E env -u X bash",
        "echo 'rm -rf x' | env - bash", "echo 'rm -rf x' | env -i X=1 bash",
        "echo 'rm -rf x' | sudo -E -- bash", "echo 'rm -rf x' | sudo -uroot bash",
        "echo 'rm -rf x' | env -S bash",
    ],
)  # fmt: skip
async def test_o2_a_shell_reading_its_input_behind_a_wrapper_is_still_refused(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_ENV, command, mode="bypass")
