"""Programs and variables that make another program run a command or load code
(behaviour 49: a command must not be smuggled past a rule): GNU parallel's
``niceload`` runs its command; ``sudo -e``/``sudoedit`` run the editor of
``SUDO_EDITOR``, ``VISUAL`` or ``EDITOR``; ``LD_PRELOAD`` loads a library into any
program, ``PERL5OPT``/``PERL5LIB`` Perl code into a Perl program such as parallel.
Each row goes through the real dispatcher (conftest ``judge``); nothing is run.
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")


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
