"""ssh's options that run a command on this computer (behaviour 49: a command must not
be smuggled past a rule), as scp's and sftp's ``-o``/``-F`` already were:

1: ``-o`` with ``ProxyCommand``, ``LocalCommand``, ``KnownHostsCommand``,
``PKCS11Provider``, ``Match exec`` and the like runs a command line or loads code, ``-F``
names a configuration that may hold them, ``-I`` a PKCS#11 library ssh loads. Only
``-o`` with a few settings that run nothing and a plain value (``-o BatchMode=yes``,
``-o ConnectTimeout=5``) keeps ssh's effects known.

2: ``SSH_ASKPASS`` (a program ssh runs for a passphrase) set in the line, and
``SUDO_ASKPASS`` for ``sudo``: the same (not ``HOME``: ssh reads ``~`` from the
password database).

What ssh runs on the remote host is not looked into (docs/permissions.md, Limits).
Each row goes through the real dispatcher (conftest ``judge``); nothing is run.
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

SSH_ALLOWED = {"allow": ["bash(ssh *)", "bash(sudo *)"]}

# -- 1: options that run a command here -------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ssh -o ProxyCommand='rm y' host true", "ssh -oProxyCommand='rm y' host",
        "ssh -o 'ProxyCommand rm y' host", "ssh -4oProxyCommand='rm y' host",
        "ssh -o proxycommand='rm y' host", "ssh -o 'LocalCommand=rm y' host",
        "ssh -o KnownHostsCommand='rm y' host", "ssh -o PKCS11Provider=./x.so host",
        "ssh -o 'Match exec \"rm y\"' host", "ssh -o Include=cfg host",
        "ssh -F cfg host", "ssh -Fcfg host", "ssh -I ./x.so host",
        # a plain setting with a second line or a value that is no plain word
        "ssh -o $'BatchMode=yes\\nProxyCommand=rm y' host", "ssh -o 'BatchMode=yes;rm' host",
        "sudo ssh -o ProxyCommand='rm y' host", "timeout 5 ssh -oProxyCommand='rm y' h",
    ],
)  # fmt: skip
async def test_b49_ssh_options_that_run_a_command(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)
    judged = await judge(SSH_ALLOWED, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "ssh host ls", "ssh -p 2222 user@host ls", "ssh -o BatchMode=yes host ls",
        "ssh -o StrictHostKeyChecking=no -o ConnectTimeout=5 host ls",
        "ssh -oport=22 host", "ssh -o 'ServerAliveInterval 30' host", "ssh -v -i key host",
        "ssh -l user -J jump host ls", "ssh -- host -o ProxyCommand=x",
    ],
)  # fmt: skip
async def test_ssh_without_them_is_still_allowed(judge, command):
    await allowed(judge, SSH_ALLOWED, command)
    await allowed(judge, DENY_RM, command)


# -- 2: variables set in the line -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "SSH_ASKPASS=./x SSH_ASKPASS_REQUIRE=force ssh host",
        "export SSH_ASKPASS=./x; ssh host", "SUDO_ASKPASS=/bin/rm sudo -A true",
        "export SUDO_ASKPASS=/bin/rm; sudo -A true",
    ],
)  # fmt: skip
async def test_b49_variables_that_make_ssh_or_sudo_run_a_program(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    judged = await judge(SSH_ALLOWED, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
