"""Shell findings of the third permissions review of session 35 (permrev3 F1-F3).

F1: bash takes an unquoted ``{NAME}`` right before a redirection operator for the
variable the file descriptor goes in (``{fd}>x rm -rf y`` runs ``rm -rf y``): it is
no program. F2: ``~`` is the ``HOME`` of the shell at that point, which the line may
have set (``HOME=/etc; cat ~/passwd``): a word holding ``~`` after that is unknown.
F3: ``cd`` with no directory goes to ``HOME``, ``cd -`` to ``OLDPWD``, and with
``cdable_vars`` on, ``cd NAME`` to the directory ``$NAME`` holds: once the line may
have set these, such a ``cd`` goes somewhere not known. Each row goes through the real
dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, BYPASS_PASSWD, BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

ALLOW = {"allow": ["bash"]}
SECRETS = {"deny": ["bash(cat src/secrets/*)"], "allow": ["bash"]}


# -- F1: {NAME}> redirections -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "{fd}>x rm -rf y", "{fd}>/dev/null rm -rf y", "{fd}<x rm y", "{fd}>&2 rm y",
        "{fd}>>x rm y", "{fd}<>x rm y", "{fd}>|x rm y", "{fd}<<<x rm y", "{fd}>&- rm y",
        "{fd}>x sh -c 'rm y'", "{fd}>x sudo rm y", "echo ok; {fd}>x rm y",
        "{_f1}>x {fd}>x rm y", "{a[0]}>x rm y",
    ],
)  # fmt: skip
async def test_f1_a_named_fd_redirection_is_no_program(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_RM, command, mode="bypass")


async def test_f1_the_program_behind_it_is_matched(judge):
    await refused(judge, {"deny": ["bash(./deploy.sh*)"]}, "{fd}>x ./deploy.sh", mode="bypass")
    await refused(judge, BYPASS_ENV, "{fd}>/dev/null cat .env", mode="bypass")
    rules = {"deny": ["read(.env)"], "allow": ["bash(cat *)", "bash"]}
    await refused(judge, rules, "{fd}>/dev/null cat .env")
    judged = await judge(
        {"ask": ["bash(git push*)"], "allow": ["bash"]}, "bash", {"command": "{fd}>x git push"}
    )
    assert judged.decision == "ask"


async def test_f1_its_target_is_still_a_file_written_or_read(judge):
    await refused(judge, {"deny": ["bash(> .env)"], "allow": ["bash"]}, "{fd}>.env echo hi")
    await refused(judge, BYPASS_ENV, "{fd}<.env echo hi", mode="bypass")


@pytest.mark.parametrize("command", ["{fd}>/dev/null echo hi", "echo hi {fd}>&2", "'{fd}'>x"])
async def test_f1_plain_uses_stay_allowed(judge, command):
    await allowed(judge, DENY_RM, command)


# -- F2: ~ after HOME is set ----------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "HOME=/etc; cat ~/passwd", "export HOME=/etc && cat ~/passwd",
        "read HOME <<< /etc; cat ~/passwd", "HOME=/etc; cat < ~/passwd",
        "HOME=/etc; grep root ~/passwd", "HOME=/etc; cp ~/passwd x",
        "declare HOME=/etc; cat ~/passwd", "printf -v HOME /etc; cat ~/passwd",
        "mapfile -t HOME <<< /etc; cat ~/passwd", "getopts a HOME; cat ~/passwd",
        "typeset HOME=/etc; cat ~/passwd", "local HOME=/etc; cat ~/passwd",
        "readonly HOME=/etc; cat ~/passwd", "readarray HOME <<< /etc; cat ~/passwd",
        "unset HOME; cat ~/passwd", "declare -n h=HOME; h=/etc; cat ~/passwd",
        "read \"$v\" <<< /etc; cat ~/passwd", "set -a; cat ~/passwd",
        "set -o allexport; cat ~/passwd", "source ./env.sh; cat ~/passwd",
        ". ./env.sh; cat ~/passwd", "eval \"$x\"; cat ~/passwd", "eval HOME=/etc; cat ~/passwd",
        "HOME=/etc; bash -c 'cat ~/passwd'", "HOME=/etc; sh -c \"cat ~/passwd\"",
        "HOME=/etc; cat x=~/passwd", "HOME[0]=/etc; cat ~/passwd",
        "HOME+=/etc; cat ~/passwd", "env HOME=/etc bash -c 'cat ~/passwd'",
        "env -u HOME bash -c 'cat ~/passwd'", "env --unset=HOME bash -c 'cat ~/passwd'",
        "env -i bash -c 'cat ~/passwd'",
    ],
)  # fmt: skip
async def test_f2_tilde_after_home_is_set_is_unknown(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")
    await refused(judge, {**BYPASS_PASSWD, "allow": ["bash"]}, command)


@pytest.mark.parametrize(
    "command", ["HOME=.; cat ~/.env", "HOME=. ; sh ~/.env", "HOME=.; grep --file=~/.env x"]
)
async def test_f2_tilde_after_home_is_set_reads_unknown_files(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")


async def test_f2_a_command_rule_sees_it_unknown(judge):
    await refused(judge, {"deny": ["bash(cat /etc/*)"]}, "HOME=/etc; cat ~/passwd", mode="bypass")
    await refused(judge, {"deny": ["bash(/etc/*)"]}, "HOME=/; ~/etc/x", mode="bypass")


@pytest.mark.parametrize(
    "command",
    ["cat ~/notes", "x=1; cat ~/notes", "cat ~/notes; HOME=/etc", "sh -c 'HOME=x' && ls"],
)
async def test_f2_tilde_without_a_home_change_stays_allowed(judge, command):
    await allowed(judge, ALLOW, command)


# -- F3: cd to HOME, OLDPWD, cdable_vars ----------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "HOME=src/secrets; cd; cat key", "HOME=src/secrets cd && cat key",
        "export HOME=src/secrets; cd ~; cat key", "HOME=src/secrets; pushd ~; cat key",
        "read HOME <<< src/secrets; cd; cat key", "OLDPWD=src/secrets; cd -; cat key",
        "OLDPWD=src/secrets cd - && cat key", "export OLDPWD=src/secrets; cd -- -; cat key",
        "printf -v OLDPWD src/secrets; cd -; cat key",
        "shopt -s cdable_vars; d=src/secrets; cd d; cat key",
        "shopt -s cdable_vars; d=src/secrets; pushd d; cat key",
        "shopt -s $o; d=src/secrets; cd d; cat key",
        "bash -O cdable_vars -c 'd=src/secrets; cd d; cat key'",
        "eval 'HOME=src/secrets'; cd; cat key", "HOME=src/secrets; eval cd; cat key",
        "source ./x.sh; cd; cat key", "set -a; cd; cat key",
    ],
)  # fmt: skip
async def test_f3_cd_to_a_place_the_line_may_set_is_unknown(judge, layout, command):
    (layout.ws / "src" / "secrets" / "key").write_text("k\n")
    await refused(judge, SECRETS, command)
    await refused(judge, {"deny": SECRETS["deny"]}, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    ["cd; ls", "cd src && cd - && ls", "d=src; cd d; ls", "shopt -s nullglob; cd src; ls"],
)
async def test_f3_plain_cds_stay_allowed(judge, command):
    await allowed(judge, ALLOW, command)


@pytest.mark.parametrize(
    "command",
    ["HOME=src/secrets; cd; cat key", "HOME=src/secrets; eval cd; cat key",
     "OLDPWD=src/secrets; eval 'cd -'; cat key"],
)  # fmt: skip
async def test_f3_later_reads_after_such_a_cd_are_unknown(judge, layout, command):
    (layout.ws / "src" / "secrets" / "key").write_text("k\n")
    await refused(judge, {"deny": ["read(src/secrets/**)"]}, command, mode="bypass")


# sudo (env_reset, set_home), su and runuser give the command the target user's HOME:
# a ~ in the script they run names that user's home, not dsh's (fixed: rev35perm A4)
async def test_f2_a_shell_run_as_another_user_has_its_home(judge):
    rules = {"deny": ["read(/nonexistent/**)"]}
    await refused(judge, rules, "sudo -u nobody sh -c 'cat ~/.ssh/id_rsa'", mode="bypass")
