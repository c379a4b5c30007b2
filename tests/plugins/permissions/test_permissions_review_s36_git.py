"""Findings of session 36's second permissions review (perm5 1-4, 8): git.

1: ``git config`` storing a command whose arguments hold ``get`` or ``list`` past the
first word (old syntax: a value pattern; ``--comment``) was taken for a read. 2: a
value with a ``.`` (``dev@example.com``) was taken for a setting's name, so a plain
setting was asked. 3: ``git clone -c``/``--config`` applies settings before its
checkout, whose hooks run. 4: ``git grep -O``/``--open-files-in-pager`` runs a
command. 8: ``safe.directory`` makes git trust another user's repository (and run its
``core.fsmonitor``): it is no plain setting.
Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

ALLOW_GIT = {"allow": ["bash(git *)"]}

RUNNING = [
    "git config core.fsmonitor 'rm -rf x' list", "git config alias.x '!rm -rf x' get",
    "git config --comment get core.fsmonitor 'rm -rf x'",
    "git config --local core.pager 'rm x' --list-x", "git config core.pager 'rm x' -l",
    "git config set core.pager 'rm x'", "git config --add core.pager 'rm x'",
    "git config --replace-all alias.x '!rm x' get",
    "git config --global --comment=c core.fsmonitor 'rm x'",
    "git config --file f core.pager 'rm x'", "git config -f f alias.x '!rm x'",
    "git config Core.Pager 'rm x'", "git config core.hooksPath h",
    "git clone -c core.hooksPath=h u d", "git clone --config core.fsmonitor=x u d",
    "git clone --config=core.fsmonitor=x u d", "git clone -ccore.hooksPath=h u d",
    "git clone --conf core.fsmonitor=x u d",
    "git grep -O'rm -rf x' foo", "git grep --open-files-in-pager='rm x' foo",
    "git grep --open-files-in-pager foo", "git grep -nO foo",
    "git -c safe.directory='*' status", "git config --global safe.directory '*'",
]  # fmt: skip


@pytest.mark.parametrize("command", RUNNING)
async def test_a_git_command_that_runs_one_is_not_allowed_by_a_pattern(judge, command):
    await refused(judge, ALLOW_GIT, command)


@pytest.mark.parametrize("command", RUNNING)
async def test_a_git_command_that_runs_one_is_denied_under_a_deny_rule(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")


PLAIN = [
    "git config user.email dev@example.com", "git config --global user.name 'Jane Q. Doe'",
    "git config core.pager", "git config --unset core.pager", "git config --get core.pager",
    "git config get core.pager", "git config list", "git config -l", "git config --list",
    "git config --get-regexp alias", "git config --global --list --show-origin",
    "git config unset core.pager", "git config --unset-all alias.x",
    "git config color.ui auto", "git config set user.email a.b@c.d",
    "git config --local user.name 'A. B.'", "git config --get-all core.pager",
    "git config remove-section alias", "git config --remove-section alias",
    "git config get --all core.pager", "git config list --show-origin",
    "git clone u d", "git clone --depth 1 u d", "git clone -c user.name=a u d",
    "git grep -n foo",
]  # fmt: skip


@pytest.mark.parametrize("command", PLAIN)
async def test_a_plain_git_command_is_allowed_by_a_pattern(judge, command):
    await allowed(judge, ALLOW_GIT, command)


@pytest.mark.parametrize("command", PLAIN)
async def test_a_plain_git_command_passes_in_bypass_mode(judge, command):
    await allowed(judge, BYPASS_RM, command, mode="bypass")


async def test_the_reason_names_the_setting_after_xargs(judge):
    judged = await refused(judge, BYPASS_RM, "echo core.pager=x | xargs git -c", mode="bypass")
    assert "git -c  " not in judged.event["reason"], judged.event["reason"]
