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

3: ``-J`` (ProxyJump) of ssh, scp and sftp: ssh runs a hop list through ``$SHELL -c``,
so only a comma list of plain ``[user@]host[:port]`` (or ``ssh://``) hops keeps its
effects known; ``-o ProxyJump=`` with such a value too.

4: ``slogin`` is ssh; ``autossh`` is not modelled.

5: ``SSH_ASKPASS`` / ``SSH_ASKPASS_REQUIRE`` count for every program that runs ssh.

6: ``HOME`` does not count for ssh (it reads ``~`` from the password database), and
``ssh -F /dev/null`` (or ``-F none``) reads no configuration.

What ssh runs on the remote host is not looked into (docs/permissions.md, Limits).
Each row goes through the real dispatcher (conftest ``judge``); nothing is run.
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

SSH_ALLOWED = {"allow": ["bash(ssh *)", "bash(sudo *)"]}
SSH_CLIENTS_ALLOWED = {"allow": ["bash(ssh *)", "bash(scp *)", "bash(sftp *)", "bash(slogin *)"]}
READ_DENIED = {"allow": ["bash"], "deny": ["read(.env)"]}

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


# -- 3: -J: a plain hop list only -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ssh -J 'x&rm${IFS}y&' host true", "ssh -J'x&rm${IFS}y&' host",
        "ssh -o ProxyJump='x&rm${IFS}y&' host", "ssh host -J 'x;rm y'",
        "scp -J 'x&rm${IFS}y&' f host:", "sftp -J 'x&rm${IFS}y&' host",
        "ssh -J 'a,b c' host", "ssh -J '' host", "ssh -J a,,b host",
        "ssh -4J'x&rm y' host",
    ],
)  # fmt: skip
async def test_b49_ssh_jump_that_is_no_plain_hop_list(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    judged = await judge(SSH_CLIENTS_ALLOWED, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "ssh -J jump host ls", "ssh -J user@jump:2222,other host ls",
        "ssh -J ssh://user@jump:22 host", "ssh -Jjump host", "scp -J jump f host:",
        "sftp -J u@jump host", "ssh -o ProxyJump=jump host", "ssh -o 'ProxyJump a,b' host",
        "ssh -o ProxyJump=none host",
    ],
)  # fmt: skip
async def test_ssh_plain_jump_is_allowed(judge, command):
    await allowed(judge, SSH_CLIENTS_ALLOWED, command)
    await allowed(judge, DENY_RM, command)


# -- 4: slogin is ssh; autossh is not modelled ------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "slogin -o ProxyCommand='rm y' host", "slogin -F cfg host",
        "/usr/bin/slogin -o ProxyCommand='rm y' host", "slogin -J 'x;rm y' host",
        "SSH_ASKPASS=./x slogin host", "autossh -M 0 -o ProxyCommand='rm y' host",
        "autossh -M 0 host",
    ],
)  # fmt: skip
async def test_b49_slogin_and_autossh(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    judged = await judge(SSH_CLIENTS_ALLOWED, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


async def test_slogin_plain_is_allowed(judge):
    await allowed(judge, SSH_CLIENTS_ALLOWED, "slogin -J jump -o BatchMode=yes host ls")


# -- 5: SSH_ASKPASS for every program that runs ssh -------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "SSH_ASKPASS=./x SSH_ASKPASS_REQUIRE=force scp f host:",
        "SSH_ASKPASS=./x SSH_ASKPASS_REQUIRE=force sftp host",
        "SSH_ASKPASS=./x SSH_ASKPASS_REQUIRE=force git fetch",
        "SSH_ASKPASS=./x rsync -a f host:", "SSH_ASKPASS=./x parallel -S host echo ::: x",
        "export SSH_ASKPASS=./x; sem -S host echo", "SSH_ASKPASS_REQUIRE=force ssh host",
    ],
)  # fmt: skip
async def test_b49_ssh_askpass_for_programs_running_ssh(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


# -- 6: ssh reads ~ from the password database, not HOME; -F /dev/null ------------------


@pytest.mark.parametrize("command", ["HOME=. ssh host ls", "HOME=. slogin host"])
async def test_home_set_for_ssh_is_allowed(judge, command):
    await allowed(judge, READ_DENIED, command)
    await allowed(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command", ["ssh -F /dev/null host ls", "ssh -F none host", "scp -F /dev/null f host:"]
)
async def test_ssh_without_a_configuration_is_allowed(judge, command):
    await allowed(judge, SSH_CLIENTS_ALLOWED, command)
