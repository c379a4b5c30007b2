"""Findings of session 36's second permissions review (perm5 5-7).

5: a watched variable (``EDITOR``, ``GIT_PAGER``, ``HOME``, ...) named by any word of
an earlier command was taken as set: ``grep -rn EDITOR src/; git diff`` was asked. A
command known to set no variable (``grep``, ``echo``, ``printf`` without ``-v``,
``unset`` but for ``HOME``...) no longer counts, but for its assignments. 6: ``less``
with ``LESSOPEN``/``LESSCLOSE`` set in the line, ``nvim -l``, vim's ``VIMINIT``,
``EXINIT``, ``MYVIMRC`` and ``HOME``, ``wget --config``/``WGETRC``/``HOME``, ``sftp
-S``/``-o``/``-b``/``-D``/``-F`` run a command. 7: ``RSYNC_RSH`` and
``GIT_CONFIG_PARAMETERS`` in dsh's own environment are the person's: only the line's
count; ``wget -e robots=off`` runs nothing.
Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

_ALLOWED = ("git", "less", "nvim", "vim", "vi", "wget", "sftp", "emacsclient")
ALLOW = {"allow": [f"bash({n} *)" for n in _ALLOWED]}


@pytest.mark.parametrize(
    "command",
    [
        "grep -rn EDITOR src/ ; git diff", "printf '%s\\n' VISUAL; git log",
        "unset GIT_PAGER; git log", "echo HOME; git status", "cat EDITOR; git commit",
        "grep -r GIT_SSH_COMMAND . && git fetch", "unset EDITOR VISUAL; git commit",
    ],
)  # fmt: skip
async def test_5_a_command_setting_no_variable_does_not_count(judge, command):
    await allowed(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "export EDITOR=x; git commit", "printf -v EDITOR x; git commit",
        "printf -vGIT_PAGER x; git log", "read GIT_PAGER; git log",
        "declare -n r=EDITOR; git commit",
        "export GIT_PAGE{R,}=x; git log", "EDITOR=x echo hi; git commit",
        "echo hi {GIT_PAGER}>f; git log", "env GIT_PAGER=x sh -c 'git log'",
        "unset HOME; cat ~/x", "sh -c 'export GIT_PAGER=x'; git log",
        "echo ${EDITOR:=x}; git commit", "echo $((GIT_PAGER=1)); git log",
    ],
)  # fmt: skip
async def test_5_a_command_that_may_set_one_still_counts(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


RUNNING = [
    "LESSOPEN='|rm -rf x %s' less f", "LESSCLOSE='rm x' less f", "export LESSOPEN='|rm x'; less f",
    "nvim -l x.lua", "nvim -ll x.lua", "VIMINIT='!rm x' vim f", "EXINIT='!rm x' vi f",
    "MYVIMRC=x vim f", "HOME=. vim f", "wget --config=f http://h/", "wget --conf f http://h/",
    "WGETRC=f wget http://h/", "HOME=. wget http://h/", "sftp -S 'rm x' h",
    "sftp -o ProxyCommand='rm x' h", "sftp -b f h", "sftp -D 'rm x' h", "sftp -F f h",
    "wget -e use_askpass='rm x' http://h/", "wget -e robots=off -e use-askpass=x http://h/",
    "wget --execute=use_askpass=x http://h/", "wget -erobots=off -eUse_AskPass=x http://h/",
    "emacsclient -e '(shell-command \"rm x\")'", "emacsclient --eval '(x)'",
    "emacsclient -a 'rm x' f", "emacsclient --alternate-editor='rm x' f", "emacsclient -nea x f",
    "git instaweb --httpd='rm x'", "git instaweb -d 'rm x'", "git instaweb --browser='rm x'",
    "vim --remote-expr 'system(\"rm x\")'", "vim --remote-send ':!rm x<CR>'",
]  # fmt: skip


@pytest.mark.parametrize("command", RUNNING)
async def test_6_running_a_command_is_not_allowed_by_a_pattern(judge, command):
    await refused(judge, ALLOW, command)


@pytest.mark.parametrize("command", RUNNING)
async def test_6_running_a_command_is_denied_under_a_deny_rule(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "less f", "vim f", "nvim f", "emacsclient -n f", "emacsclient -s srv -t f", "sftp h",
        "sftp -P 22 h", "wget http://h/",
        "wget -e robots=off http://h/", "wget --execute robots=off http://h/",
        "wget -e tries=3 -e Check-Certificate=off http://h/",
    ],
)  # fmt: skip
async def test_6_the_plain_ones_pass(judge, command):
    await allowed(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    ("name", "value", "command"),
    [
        ("RSYNC_RSH", "ssh", "rsync -a src/ h:dst/"),
        ("RSYNC_CONNECT_PROG", "x", "rsync -a src/ h:dst/"),
        ("GIT_CONFIG_PARAMETERS", "'core.pager'='less'", "git log"),
        ("GIT_CONFIG_COUNT", "1", "git log"),
        ("LESSOPEN", "| lesspipe %s", "less f"),
        ("WGETRC", "/etc/wgetrc", "wget http://h/"),
    ],
)
async def test_7_inherited_ones_are_the_persons(judge, monkeypatch, name, value, command):
    monkeypatch.setenv(name, value)
    await allowed(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    ["RSYNC_RSH='rm x' rsync -a a h:b", "export GIT_CONFIG_PARAMETERS=x; git log"],
)
async def test_7_set_in_the_line_they_count(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
