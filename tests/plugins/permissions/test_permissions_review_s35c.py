"""Findings of the review of session 35's permissions changes (rev35perm A1-A6, B1-B3).

B1: only a word bash tilde-expands reads ``HOME`` (``~/x``, ``~``, ``x=~/y``,
``PATH=a:~/b``), not ``HEAD~1`` or a quoted ``'s/~/-/'``. B2: a variable is named by a
whole identifier (``JAVA_HOME`` does not name ``HOME``). B3: ``export``/``declare``/
``local`` set a variable only the shell knows when its name (not its value) holds ``$``.
A2: a name only the shell reads (``POSIXLY_CORREC{T,}``) may be any watched variable.
Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_ENV, BYPASS_PASSWD, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

BYPASS_PUSH = {"deny": ["bash(git push *)"]}
_ALLOWED = ["source", "git", "export", "sed", "cat", "cd", "make", "local", "grep"]
ALLOW_SOME = {"allow": [f"bash({name} *)" for name in _ALLOWED]}


# -- B1: only words bash tilde-expands ------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "source .venv/bin/activate && git diff HEAD~1",
        "source .venv/bin/activate && git rebase -i HEAD~2",
        "export JAVA_HOME=/opt/jdk && git log HEAD~3..HEAD",
        "source .venv/bin/activate && sed -i 's/~/-/' src/a.py",
        "source .venv/bin/activate && cat 'x~'",
        'source .venv/bin/activate && cat "~/x"',
        "source .venv/bin/activate && git show HEAD~1:src/a.py",
    ],
)
async def test_b1_a_tilde_bash_does_not_expand_stays_known(judge, command):
    await allowed(judge, ALLOW_SOME, command)
    await allowed(judge, BYPASS_PUSH, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "HOME=/etc; cat ~/passwd", "HOME=/etc; cat ~", "HOME=/etc; x=~/passwd cat x",
        "HOME=/etc; export F=~/passwd", "HOME=/etc; export P=/x:~/passwd",
        "HOME=/etc; cat ~+/passwd", "HOME=/etc; cat ~-/passwd",
        "HOME=/etc; grep -f~/passwd x", "HOME=/etc; grep --file=~/passwd x",
    ],
)  # fmt: skip
async def test_b1_words_bash_tilde_expands_are_unknown(judge, command):
    await refused(judge, {"allow": ["bash(cat *)", "bash(export *)"]}, command)


async def test_b1_a_cd_to_a_name_holding_a_tilde_is_followed(judge):
    rules = {"allow": ["bash(source *)", "bash(cd *)", "bash(make *)"]}
    await allowed(judge, rules, "source .venv/bin/activate && cd src~old && make")
    await refused(judge, rules, "source .venv/bin/activate && cd ~/src && make")


# -- B2: whole identifiers ------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "export JAVA_HOME=/opt/jdk && cat ~/notes.txt",
        "export XDG_CONFIG_HOME=/x && cat ~/notes.txt",
        "export CARGO_HOME=/x; cat ~/notes.txt",
        "cat HOMEWORK.md ~/notes.txt",
        "export MY_OLDPWD=1; cd - ",
    ],
)
async def test_b2_a_longer_name_does_not_name_home(judge, command):
    await allowed(judge, BYPASS_ENV, command, mode="bypass")


async def test_b2_asked_no_more(judge):
    await allowed(judge, ALLOW_SOME, "export JAVA_HOME=/opt/jdk && cd ~/project && make")
    await allowed(judge, ALLOW_SOME, "grep -n JAVA_HOME Makefile && cat ~/notes.txt")


@pytest.mark.parametrize(
    "command",
    [
        "HOME=/etc; cat ~/passwd", "h=${HOME:=/etc}; cat ~/passwd",
        "read -r HOME; cat ~/passwd", "printf -v HOME /etc; cat ~/passwd",
        "declare -n r=HOME; r=/etc; cat ~/passwd", "HOME+=/x; cat ~/passwd",
        "HOME[0]=/etc; cat ~/passwd", "echo ${HOME=/etc}; cat ~/passwd",
        "{HOME}>x true; cat ~/passwd",
        # a plain read ($HOME, ${HOME}) sets nothing: test_permissions_watched_variables
    ],
)  # fmt: skip
async def test_b2_naming_home_still_counts(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")


# -- B3: a $ in the name, not the value -----------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        'export PATH="$PWD/bin:$PATH"; cat ~/notes',
        'local x="$1"; cat ~/notes',
        "declare -x A=`pwd`; cat ~/notes",
        'readonly V="$x"; cd ~/project && make',
    ],
)
async def test_b3_a_value_with_dollar_sets_one_named_variable(judge, command):
    await allowed(judge, BYPASS_ENV, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        'export "$v"=/etc; cat ~/passwd', "export $v; cat ~/passwd",
        "declare `echo HOME`=/etc; cat ~/passwd", "declare -n r=$a$b; r=/etc; cat ~/passwd",
        "local -n r=$x; r=/etc; cat ~/passwd", "declare -i x=$a; cat ~/passwd",
    ],
)  # fmt: skip
async def test_b3_a_name_only_the_shell_knows_may_be_any(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")


# -- A2: a name with braces or a glob may be any watched one --------------------------


@pytest.mark.parametrize(
    "command",
    [
        "export POSIXLY_CORREC{T,}=1; head x -n .env",
        "declare -x POSIXLY_CORREC{T,}=1; head x -n .env",
        "export POSIXLY_CORREC?=1; head x -n .env",
        "typeset -x POSIXLY_CORRE[C]T=1; head x -n .env",
    ],
)
async def test_a2_posixly_correct_with_braces_or_a_glob(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "export TAR_OPTION{S,}=-C.; tar xf a.tar -C out && cat src/a.py",
        "declare -x TAR_OPTION?=-C.; tar xf a.tar -C out && cat src/a.py",
        "export UNZI{P,}=-d.; unzip a.zip -d out && cat src/a.py",
    ],
)
async def test_a2_tar_and_unzip_options_with_braces(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    plain = "export X=1;" + command.partition(";")[2]
    await allowed(judge, BYPASS_ENV, plain, mode="bypass")


# -- A1: a trap's action runs later -----------------------------------------------------


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        ("trap 'cat passwd' EXIT; cd /etc", BYPASS_PASSWD),
        ("trap 'cat ../.env' EXIT; cd src", BYPASS_ENV),
        ("trap 'cat ~/passwd' EXIT; HOME=/etc", BYPASS_PASSWD),
        ("trap 'head x -n .env' EXIT; export POSIXLY_CORRECT=1", BYPASS_ENV),
        ("trap 'cat ~/passwd' DEBUG; HOME=/etc; true", BYPASS_PASSWD),
        ("trap 'cat passwd' ERR; cd /etc; false", BYPASS_PASSWD),
        ("eval \"trap 'cat passwd' EXIT\"; cd /etc", BYPASS_PASSWD),
        ("trap -- 'cat passwd' EXIT INT; cd /tmp && cd /etc && make", BYPASS_PASSWD),
    ],
)
async def test_a1_a_trap_action_is_checked_where_the_line_ends(judge, command, rules):
    await refused(judge, rules, command, mode="bypass")
    await refused(judge, {**rules, "allow": ["bash"]}, command)


@pytest.mark.parametrize(
    "command",
    ["trap 'rm -f tmp.txt' EXIT; make", "trap 'rm -f tmp.txt' EXIT; cd src && make"],
)
async def test_a1_a_plain_trap_stays_allowed(judge, command):
    await allowed(judge, BYPASS_ENV, command, mode="bypass")


# -- A3: a subscript bash evaluates as arithmetic ---------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "mkdir -p 5; a=HO; b=ME; x=$a$b=5; : ${BASH_VERSINFO[x]}; cat ~/../.env",
        "x=$v; echo ${y[x]}; cat ~/.env", "echo ${y[i+1]}", "echo ${#y[x]}",
        "echo ${y[x]:-z}",
    ],
)  # fmt: skip
async def test_a3_a_named_subscript_is_evaluated(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, {"allow": ["bash"]}, command)


@pytest.mark.parametrize("command", ["echo ${y[0]}", "echo ${y[-1]}", "echo ${y[@]} ${#y[*]}"])
async def test_a3_a_plain_subscript_stays_allowed(judge, command):
    await allowed(judge, {"allow": ["bash"]}, command)


# -- A4: a command run as another user has that user's HOME ----------------------------


@pytest.mark.parametrize(
    "command",
    [
        "sudo sh -c 'cat ~/.ssh/id_rsa'", "sudo -H sh -c 'cat ~/.ssh/id_rsa'",
        "sudo bash -c 'cd; cat .ssh/id_rsa'", "su -c 'cat ~/.ssh/id_rsa'",
        "su - -c 'cat ~/.ssh/id_rsa'", "doas sh -c 'cat ~/.ssh/id_rsa'",
        "runuser -l root -c 'cat ~/.ssh/id_rsa'", "pkexec sh -c 'cat ~/.ssh/id_rsa'",
        "sudo -u root sh -c 'cat ~/.ssh/id_rsa'", "sudo env sh -c 'cat ~/.ssh/id_rsa'",
    ],
)  # fmt: skip
async def test_a4_tilde_behind_sudo_is_the_target_users_home(judge, command):
    await refused(judge, {"deny": ["read(/nonexistent/**)"]}, command, mode="bypass")


@pytest.mark.parametrize(
    "command", ["sudo sh -c 'ls /root' && cat ~/notes.txt", "sudo cat ~/notes.txt"]
)
async def test_a4_the_outer_tilde_stays_dshs_home(judge, command):
    await allowed(judge, {"deny": ["read(/nonexistent/**)"]}, command, mode="bypass")


# -- A5: TAR_OPTIONS gives tar c its -C or -T ------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "TAR_OPTIONS=-C/etc tar cf x.tar passwd", "export TAR_OPTIONS=-C/etc; tar cf x.tar passwd",
        "env TAR_OPTIONS=-T/etc/passwd tar cf x.tar", "TAR_OPTIONS=--files-from=/etc/passwd tar c",
    ],
)  # fmt: skip
async def test_a5_tar_options_may_name_what_tar_reads(judge, command):
    await refused(judge, BYPASS_PASSWD, command, mode="bypass")
    await refused(judge, {**BYPASS_PASSWD, "allow": ["bash"]}, command)


async def test_a5_tar_without_it_stays_allowed(judge):
    await allowed(judge, BYPASS_PASSWD, "tar cf x.tar src", mode="bypass")


# -- A6: Python environments under accept-edits; more readers ---------------------------


@pytest.mark.parametrize(
    "path",
    [
        "conda/bin/pytest", "conda/lib/python3.12/site-packages/x.py", "conda/etc/x.sh",
        "__pypackages__/3.12/lib/x.py", "__pypackages__/3.12/lib/x.pth",
        ".venv/share/jupyter/kernels/python3/kernel.json",
        ".venv/etc/jupyter/jupyter_server_config.py", ".venv/x.py",
        "conda/conda-meta/history", "rootbin/bin/x",
    ],
)  # fmt: skip
async def test_a6_python_environments_are_asked_about(judge, layout, path):
    (layout.ws / "conda" / "bin").mkdir(parents=True)
    (layout.ws / "conda" / "conda-meta").mkdir()
    (layout.ws / ".venv" / "bin").mkdir(parents=True)
    (layout.ws / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (layout.ws / "rootbin" / "bin").mkdir(parents=True)
    (layout.ws / "rootbin" / "conda-meta").mkdir()
    judged = await judge({}, "write", {"path": path}, mode="accept-edits")
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize("path", ["src/new.py", "bin/tool.sh", "pypackages/x.py"])
async def test_a6_other_files_are_still_edited(judge, layout, path):
    judged = await judge({}, "write", {"path": path}, mode="accept-edits")
    assert judged.decision == "allow", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "xxhsum .env", "b3sum .env", "sha3sum .env", "rhash --sha256 .env", "crc32 .env",
        "pigz -c .env", "lzip -c .env", "lzop -c .env", "brotli -c .env", "brotli -d .env",
        "pygmentize .env", "ed .env", "ex .env", "vi .env", "vim -R .env", "nvim .env",
        "nano .env", "emacs .env",
    ],
)  # fmt: skip
async def test_a6_more_readers(judge, command):
    await refused(judge, BYPASS_ENV, command, mode="bypass")
    await refused(judge, {**BYPASS_ENV, "allow": ["bash"]}, command)


@pytest.mark.parametrize("command", ["b3sum src/a.py", "vim src/a.py", "pigz -c src/a.py"])
async def test_a6_their_other_files_are_still_read(judge, command):
    await allowed(judge, {**BYPASS_ENV, "allow": ["bash"]}, command)
