"""Findings of session 36's permissions review (perm4 1-3).

1: a trap whose action may move the shell (``cd``, ``pushd``, ``popd``, ``source``)
on anything but ``EXIT`` (``DEBUG``, ``ERR``, ``RETURN``, a signal) runs before later
commands: from it on, where the shell is is not known. 2: bash 5.3's ``${ cmd; }``
and ``${| cmd; }`` run a command in the shell: not checked, so asked. 3: ``history
-r``/``-w``/``-a``/``-n FILE`` and ``bind -f FILE`` read or write a file; so does
setting ``HISTFILE`` (bash writes the history there as it exits).
Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_PASSWD, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

OPEN_PASSWD = {"allow": ["bash(*)"], "deny": ["read(/etc/passwd)"]}
SECRETS = {"allow": ["bash(*)"], "deny": ["bash(cat src/secrets/*)", "read(src/secrets/**)"]}
OPEN_ETC_WRITE = {"allow": ["bash(*)"], "deny": ["write(/etc/**)"]}


@pytest.mark.parametrize(
    "command",
    [
        "trap 'cd /etc' DEBUG; cat passwd", "trap 'cd /etc' ERR; false; cat passwd",
        "trap 'cd /etc' RETURN; . src/a.py; cat passwd", "trap -- 'pushd /etc' INT; cat passwd",
        "eval 'trap \"cd /etc\" DEBUG'; cat passwd", "sh -c 'trap \"cd /etc\" DEBUG; cat passwd'",
        "builtin trap 'cd /etc' DEBUG; cat passwd", "trap '. ./s' DEBUG; cat passwd",
        "trap 'eval cd /etc' DEBUG; cat passwd", "trap 'true; cd /etc' debug; cat passwd",
        "trap 'cd /etc' EXIT DEBUG; cat passwd", "trap 'trap \"cd /etc\" DEBUG' ERR; cat passwd",
    ],
)  # fmt: skip
async def test_1_a_trap_that_may_move_the_shell_loses_the_places(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")
    await refused(judge, OPEN_PASSWD, command)


async def test_1_a_trap_into_a_denied_directory(judge):
    await refused(judge, SECRETS, "trap 'cd src/secrets' DEBUG; cat key")


async def test_1_a_write_after_a_moving_trap(judge):
    await refused(judge, OPEN_ETC_WRITE, "trap 'cd /etc' DEBUG; echo x > x")


@pytest.mark.parametrize(
    "command",
    [
        "trap 'cd /etc' EXIT; cat src/a.py", "trap 'echo failed' ERR; cat src/a.py",
        "trap - DEBUG; cat src/a.py", "trap -p; cat src/a.py",
    ],
)  # fmt: skip
async def test_1_other_traps_change_nothing(judge, command):
    await allowed(judge, OPEN_PASSWD, command)


@pytest.mark.parametrize(
    "command",
    [
        "echo ${ cat /etc/passwd; }", "echo ${| cat /etc/passwd; }",
        "echo ${\tcat /etc/passwd; }", "echo ${\ncat /etc/passwd\n}",
        'echo "${ cat /etc/passwd; }"', "echo ${ cd /etc; }; cat passwd",
    ],
)  # fmt: skip
async def test_2_in_shell_command_substitution_is_not_checked(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "set -o history; history -r /etc/passwd; history", "history -n /etc/passwd",
        "history -a -r /etc/passwd", "history -r/etc/passwd", "bind -f /etc/passwd",
        "bind -f/etc/passwd", "cd /etc; history -r passwd",
    ],
)  # fmt: skip
async def test_3_history_and_bind_read_their_file(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "history -w /etc/x", "history -a /etc/x", "set -o history; HISTFILE=/etc/x; echo y",
        "set -o history; export HISTFILE=/etc/x", "set -o history; read HISTFILE <<< /etc/x",
    ],
)  # fmt: skip
async def test_3_history_writes_its_file(judge, command):
    await refused(judge, OPEN_ETC_WRITE, command)


@pytest.mark.parametrize("command", ["history", "history 10", "history -c", "bind -l"])
async def test_3_history_without_a_file_is_a_plain_command(judge, command):
    await allowed(judge, OPEN_PASSWD, command)
