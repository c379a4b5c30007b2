"""The closed list of wrappers (security review, session 28, findings 2 and 4).

``prlimit rm victim`` removed a file under ``deny: bash(rm *)`` and ``prlimit cat .env``
printed a file under ``deny: read(.env)``: util-linux's and other common wrappers were
not in ``_wrappers.WRAPPERS``, so what they run was not looked at. ``su -c``,
``script -c``, ``flock -c`` run a command string, and ``unshare``, ``chroot /``,
``sudo -s`` given no command run a shell reading its input (``_wrapper_grammar``).
A shell given a script file reads it (``sh -v .env`` prints it): it is a reader for
``read`` rules (``_reads``). Each row goes through the real dispatcher (conftest
``judge``); the layout has ``.env``, ``innocent.txt -> .env`` and ``src/a.py``.
"""

from __future__ import annotations

import re

import pytest
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

DENY_RM = {"allow": ["bash"], "deny": ["bash(rm *)"]}
DENY_ENV = {"allow": ["bash"], "deny": ["read(.env)"]}

NEW_WRAPPERS = [
    "prlimit", "prlimit --nofile=64", "prlimit -n 64", "setpriv --reuid=0", "setpriv --nnp",
    "flock lockfile", "flock -n -w 5 lockfile", "unshare", "unshare -r",
    "unshare --propagation private",
    "chroot /", "chroot --userspec=0:0 /", "nsenter -t 1 -m", "runuser -u root --",
    "runuser -u root", "fakeroot", "ssh-agent", "systemd-run --scope", "valgrind -q", "ltrace",
    "catchsegv", "numactl -N 0", "cgexec -g cpu:grp", "firejail --quiet", "bwrap --bind / /",
    "proot -0", "dbus-run-session --", "dbus-launch", "xvfb-run -a", "faketime 2020-01-01",
    "eatmydata", "rlwrap", "torsocks", "proxychains4 -q", "pkexec", "setarch x86_64", "linux64",
    "cpulimit -l 50 --", "trickle -d 10", "nocache", "sudo -i", "doas", "gosu root",
    "sshpass -p pw", "ccache", "run0", "gtimeout 5", "systemd-inhibit", "tini --",
    "mpirun -np 2", "chronic", "busybox",
]  # fmt: skip


@pytest.mark.parametrize("mode", ["default", "bypass"])
@pytest.mark.parametrize("wrapper", NEW_WRAPPERS)
async def test_a_deny_rule_covers_the_command_behind_each_wrapper(judge, wrapper, mode):
    rules = DENY_RM if mode == "default" else {"deny": ["bash(rm *)"]}
    judged = await judge(rules, "bash", {"command": f"{wrapper} rm victim"}, mode=mode)
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: bash(rm *)"


@pytest.mark.parametrize(
    "wrapper",
    ["prlimit", "setpriv --nnp", "flock lockfile", "unshare -r", "runuser -u root --", "nice"],
)
async def test_a_read_deny_rule_covers_what_each_wrapper_reads(judge, wrapper):
    judged = await judge(DENY_ENV, "bash", {"command": f"{wrapper} cat .env"})
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: read(.env)"


@pytest.mark.parametrize(
    "command",
    [
        "su -c 'ls; rm victim'",
        "su root -c 'ls; rm victim'",
        "su -l -c 'ls; rm victim' root",
        "script -qc 'ls; rm victim' /dev/null",
        "script -q -e -c 'ls; rm victim'",
    ],
)
async def test_the_command_string_of_su_and_script_is_opened(judge, command):
    judged = await judge(
        {"allow": ["bash(*)"], "deny": ["bash(rm *)"]}, "bash", {"command": command}
    )
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: bash(rm *)"


@pytest.mark.parametrize(
    "command",
    [
        # a command string not opened: flock's and runuser's, and other spellings
        "flock lockfile -c 'ls; rm victim'",
        "flock -c 'ls; rm victim' lockfile",
        "runuser -u root -c 'ls; rm victim'",
        "runuser root -c 'ls; rm victim'",
        "su --command='ls; rm victim'",
        "su --comm 'ls; rm victim'",
        "su -c'ls; rm victim'",
        "su -c ls -c 'rm victim'",
        "script --command 'ls; rm victim' /dev/null",
        "script -E -c -c 'rm victim'",
        # another shell, or another directory
        "su -s /usr/bin/python3 -c 'import os'",
        "su - -c 'cat ../x'",
        # given no command, a shell reading its input
        "echo 'rm victim' | unshare",
        "echo 'rm victim' | unshare -r --propagation private",
        "echo 'rm victim' | chroot /",
        "echo 'rm victim' | nsenter -t 1 -m",
        "echo 'rm victim' | runuser -u root",
        "echo 'rm victim' | su",
        "echo 'rm victim' | su root",
        "echo 'rm victim' | sudo -s",
        "echo 'rm victim' | sudo -iu root",
        "echo 'rm victim' | doas -s",
        "echo 'rm victim' | fakeroot",
        "echo 'rm victim' | pkexec",
        "echo 'rm victim' | script -q /dev/null",
        "echo 'rm victim' | timeout 5 unshare",
        "echo 'rm victim' | newgrp",
        "systemd-run --shell",
        "echo 'rm victim' | run0",
        "echo 'rm victim' | gchroot /",
        # too open to model
        "sg wheel 'ls; rm victim'",
        "gdb -batch -ex 'shell rm victim'",
        "capsh -- -c 'rm victim'",
        "bwrap --bind a b --ro-bind c d rm victim",
        "echo 'rm victim' | at now",
        "tmux new -d 'ls; rm victim'",
        "expect -c 'spawn rm victim'",
        "sudo -u root tmux send-keys 'rm victim' Enter",
    ],
)
@pytest.mark.parametrize("mode", ["default", "bypass"])
async def test_what_a_wrapper_hides_fails_closed(judge, command, mode):
    rules = DENY_RM if mode == "default" else {"deny": ["bash(rm *)"]}
    judged = await judge(rules, "bash", {"command": command}, mode=mode)
    # asked about (or denied, where the string a shell would open holds the rm)
    assert judged.decision in (("ask", "deny") if mode == "default" else ("deny",)), judged.event[
        "reason"
    ]


@pytest.mark.parametrize(
    "command",
    [
        "flock lockfile -c 'cat .env'",
        "su -c 'cat .env'",
        "script -qc 'cat .env' /dev/null",
        "su --command 'cat .env'",
        "chroot / cat work/.env",  # chroot runs it in its root: a relative name is not known
        "sudo -i cat ../work/.env",  # a login shell's home
        "unshare -w / cat work/.env",
        "sudo --login cat ../work/.env",
        "X=1 chroot / cat work/.env",
        "timeout 5 systemd-run cat work/.env",  # its service runs in /
    ],
)
async def test_a_read_deny_rule_covers_what_a_wrapper_hides(judge, command):
    judged = await judge(DENY_ENV, "bash", {"command": command})
    assert judged.decision != "allow", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "sh -v .env",
        "bash -x .env",
        "bash -- .env",
        "bash - .env",
        "dash .env",
        "zsh -x .env",
        "sh -v innocent.txt",  # a symlink to .env
        "bash -o verbose .env",
        "bash -euxo pipefail .env",
        "bash --rcfile .env -i",
        "sudo bash -v .env",
        "timeout 5 sh -v .env",
        "echo ok && sh -v ./.env",
    ],
)
async def test_b49_a_shell_given_a_script_file_reads_it(judge, command):
    judged = await judge(DENY_ENV, "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: read(.env)"
    assert "which reads" in judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "sh -v src/a.py",
        "bash -c 'echo .env'",  # .env is only a word of the script
        "bash -c 'echo hi' .env",  # and here $0
        "bash -x src/a.py .env",  # an argument of the script, not read by the shell
        # ordinary uses of the wrappers: the inner command's outcome
        "prlimit --nofile=64 cat src/a.py",
        "flock -n lockfile cat src/a.py",
        "runuser -u root -- cat src/a.py",
        "su -c 'cat src/a.py'",
        "script -qc 'cat src/a.py' /dev/null",
        "sudo -l",
        "sudo -u root ls",
    ],
)
async def test_other_files_and_ordinary_wrapper_uses_still_run(judge, command):
    await allowed(judge, DENY_ENV, command)


@pytest.mark.parametrize(
    "command",
    [
        "grep chroot src/a.py",
        "grep -e systemd-run src/a.py",
        "cat --root src/a.py",
        "ls --login ./src",
    ],
)
async def test_only_a_wrapper_runs_a_command_elsewhere(judge, command):
    """Not a word named chroot, nor a program's own --root or --login: the path after
    it is the file it seems to be (a relative path behind a wrapper that moves is not
    known, and is asked about under a deny rule with a pattern)."""
    rules = {"allow": ["bash"], "deny": ["bash(rm *)", "read(.env)"]}
    await allowed(judge, rules, command)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("prlimit --nofile=64 ls src", "allow"),
        pytest.param(
            "flock lockfile ls src",
            "allow",
            marks=pytest.mark.xfail(
                strict=True,
                reason="_commands takes the first word behind a wrapper's options "
                "(flock's FILE, runuser's -u USER) for its command: asked, as sudo -u root ls is",
            ),
        ),
        pytest.param(
            "runuser -u root -- ls src",
            "allow",
            marks=pytest.mark.xfail(strict=True, reason="as flock lockfile ls src"),
        ),
        ("flock lockfile ls src", "ask"),
        ("unshare -r ls src", "allow"),
        ("su -c 'ls src'", "allow"),
        ("script -qc 'ls src' /dev/null", "allow"),
        ("prlimit --nofile=64 git push", "ask"),  # the inner command is not allowed
        ("su -c 'git push'", "ask"),
        ("flock lockfile rm -rf src", "deny"),
        ("script -qc 'rm -rf src' /dev/null", "deny"),
    ],
)
async def test_an_allowed_wrapper_gets_the_outcome_of_its_command(judge, command, expected):
    wrappers = ["prlimit", "flock", "runuser", "unshare", "su", "script"]
    rules = {
        "allow": ["bash(ls*)", *(f"bash({w} *)" for w in wrappers)],
        "deny": ["bash(rm *)"],
    }
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == expected, judged.event["reason"]


def test_the_docs_name_every_wrapper():
    """docs/permissions.md names the closed list (it ended in "..." before)."""
    from pathlib import Path

    from dsh_permissions._wrapper_grammar import UNMODELLED
    from dsh_permissions._wrappers import WRAPPERS

    text = (Path(__file__).parents[3] / "docs" / "permissions.md").read_text("utf-8")
    section = text[text.index("The wrappers are") : text.index("Which options of a wrapper")]
    named = set(re.findall(r"`([^`\s]+)`", section))
    assert named >= WRAPPERS | UNMODELLED, sorted((WRAPPERS | UNMODELLED) - named)
