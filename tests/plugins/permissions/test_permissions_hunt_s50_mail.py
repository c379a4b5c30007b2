"""Bypasses closed in session 50 (behaviour 49: a command that runs what the checker
cannot see is asked about, never allowed): mail programs.

``mail`` / ``mailx`` (bsd-mailx, s-nail, heirloom, GNU mailutils) run what their input's
tilde escapes give (``~!CMD``, ``~|CMD``), a recipient ``|CMD`` and the ``sendmail``
or editor variables ``-S`` sets (``mailx -S sendmail=/bin/sh``), so any use is taken as
running a command not looked into, as ``ed`` is. ``mutt`` / ``neomutt`` run the
configuration commands ``-e`` gives and a ``-F`` file holds (``set sendmail="CMD"``,
a backtick), and read their configuration where ``HOME`` or ``XDG_CONFIG_HOME`` set in
the line say. Each row goes through the real dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")


@pytest.mark.parametrize(
    "command",
    [
        "mailx -S sendmail=/bin/sh x", "mail -S sendmail='rm x' u",
        "s-nail -S sendmail=rm u", "echo '~!rm x' | mail -s s u", "mail '|rm x'",
        "echo hi | mailx -s subj u", "sudo mailx -S sendmail=rm u", "bsd-mailx u",
        "timeout 5 mail -s s u < /dev/null", "Mail u", "nail u", "heirloom-mailx u",
    ],
)  # fmt: skip
async def test_b50_mail_runs_what_its_input_or_options_give(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "mutt -e 'set sendmail=\"rm x\"' u", "neomutt -e 'set sendmail=rm' u",
        "mutt -s subj -e 'set editor=rm' u", "mutt -F ./muttrc u", "mutt -Fmuttrc u",
        "mutt -ne 'source \"rm x|\"' u", "HOME=. mutt -s s u < body",
        "XDG_CONFIG_HOME=. neomutt -s s u < body", "env mutt -e x u",
    ],
)  # fmt: skip
async def test_b50_mutt_runs_its_configuration_commands(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command", ["mutt -s subj u < body", "neomutt -s 'a b' -c cc@x u < body", "mutt -a f -- u"]
)
async def test_b50_plain_mutt_passes(judge, command):
    await allowed(judge, DENY_RM, command)
