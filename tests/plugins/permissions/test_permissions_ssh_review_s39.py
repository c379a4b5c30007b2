"""A re-review of ssh's and GNU parallel's remote options (behaviour 49: a command must
not be smuggled past a rule). Each row goes through the real dispatcher (conftest
``judge``); nothing is run.

1: ``-J`` (ProxyJump) of ssh, scp and sftp: ssh runs a hop list through ``$SHELL -c``,
so only a comma list of plain ``[user@]host[:port]`` (or ``ssh://``) hops keeps its
effects known; ``-o ProxyJump=`` with such a value too.
2: ``slogin`` is ssh; ``autossh`` is not modelled.
3: ``SSH_ASKPASS`` / ``SSH_ASKPASS_REQUIRE`` count for every program that runs ssh.
4: parallel's ``{= perl =}`` replacement strings run Perl here.
5: a plain sshlogin with a ``/`` as a word of its own keeps parallel's command known.
6: ``HOME`` does not count for ssh (it reads ``~`` from the password database).
7: ``niceload``; ``sudo -e``'s editor; ``LD_PRELOAD``, ``PERL5OPT`` and the like.
8: a watched variable only read is not set; ``ssh -F /dev/null`` reads no file.
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_PASSWD, BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

SSH_ALLOWED = {"allow": ["bash(ssh *)", "bash(scp *)", "bash(sftp *)", "bash(slogin *)"]}
READ_DENIED = {"allow": ["bash"], "deny": ["read(.env)"]}

# -- 1: -J ------------------------------------------------------------------------------


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
    judged = await judge(SSH_ALLOWED, "bash", {"command": command})
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
    await allowed(judge, SSH_ALLOWED, command)
    await allowed(judge, DENY_RM, command)


# -- 2: slogin is ssh; autossh is not modelled ------------------------------------------


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
    judged = await judge(SSH_ALLOWED, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


async def test_slogin_plain_is_allowed(judge):
    await allowed(judge, SSH_ALLOWED, "slogin -J jump -o BatchMode=yes host ls")


# -- 3: SSH_ASKPASS for every program that runs ssh -------------------------------------


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


# -- 4: parallel's {= perl =} runs Perl here --------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "parallel echo '{= qx(rm y) =}' ::: x", "parallel echo {= qx{rm y} =} ::: x",
        "parallel --tagstring '{= qx(rm y) =}' echo ::: x",
        "parallel --results '{= qx(rm y) =}' echo ::: x",
        "parallel --wd '{= qx(rm y) =}' echo ::: x", "parallel --wd='{=qx(rm y)=}' echo ::: x",
        "parallel echo 'a{=qx(rm y)=}b' ::: x", "sem echo '{= qx(rm y) =}'",
    ],
)  # fmt: skip
async def test_b49_parallel_perl_replacement_strings(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    judged = await judge(
        {"allow": ["bash(parallel *)", "bash(sem *)"]}, "bash", {"command": command}
    )
    assert judged.decision == "ask", judged.event["reason"]


# -- 5: plain sshlogins holding a / as a word of their own ------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "parallel -S 8/host echo ::: x", "parallel -S @g/host echo ::: x",
        "parallel --sshlogin 2/user@host:22 echo ::: x", "sem -S 4/host echo",
    ],
)  # fmt: skip
async def test_plain_sshlogin_with_a_slash_is_allowed(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 6: ssh reads ~ from the password database, not HOME --------------------------------


@pytest.mark.parametrize("command", ["HOME=. ssh host ls", "HOME=. slogin host"])
async def test_home_set_for_ssh_is_allowed(judge, command):
    await allowed(judge, READ_DENIED, command)
    await allowed(judge, DENY_RM, command)


# -- 7: niceload, sudo's editor, variables that load code into any program --------------


@pytest.mark.parametrize(
    "command",
    [
        "niceload rm y", "niceload --ssh rm y", "SUDO_EDITOR='rm y' sudoedit f",
        "SUDO_EDITOR='rm y' sudo -e f", "VISUAL='rm y' sudo --edit f",
        "export EDITOR='rm y'; sudo -u root -e f", "EDITOR='rm y' sudo -Ae f",
        "LD_PRELOAD=./x.so ssh host", "PERL5OPT=-Mx parallel echo ::: x",
        "PERL5LIB=. parallel echo ::: x", "export LD_PRELOAD=./x.so; ls",
        "env LD_PRELOAD=./x.so ls",
    ],
)  # fmt: skip
async def test_b49_wrappers_editors_and_loaders(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    ["EDITOR=vim sudo apt update", "sudo -e f", "sudoedit f", "VISUAL=vi sudo -u root ls"],
)
async def test_sudo_without_an_editor_it_runs_is_allowed(judge, command):
    await allowed(judge, DENY_RM, command)


# -- 8: a watched variable only read is not set; ssh -F /dev/null reads no file ---------


@pytest.mark.parametrize(
    "command",
    [
        "export PATH=$HOME/bin:$PATH; parallel echo ::: x",
        "echo $SHELL; parallel echo ::: x", 'echo "${SHELL}"; parallel echo ::: x',
        "cd $HOME && git status", "X=$SHELL; parallel echo ::: x", "cd $HOME && ssh host ls",
    ],
)  # fmt: skip
async def test_a_watched_variable_only_read_is_not_set(judge, command):
    await allowed(judge, READ_DENIED, command)


@pytest.mark.parametrize("command", ["h=$HOME; cat ~/passwd", "echo ${HOME}; cat ~/passwd"])
async def test_home_only_read_leaves_tilde_known(judge, command):
    await allowed(judge, BYPASS_PASSWD, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "echo ${SHELL:=x}; parallel echo ::: x", "export SHELL=x; parallel echo ::: x",
        "declare -n r=SHELL; r=x; parallel echo ::: x", "export HOME; HOME=. git status",
        ": $((SHELL=1)); parallel echo ::: x", "read SHELL; parallel echo ::: x",
    ],
)  # fmt: skip
async def test_b49_a_watched_variable_set_still_counts(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command", ["ssh -F /dev/null host ls", "ssh -F none host", "scp -F /dev/null f host:"]
)
async def test_ssh_without_a_configuration_is_allowed(judge, command):
    await allowed(judge, SSH_ALLOWED, command)
