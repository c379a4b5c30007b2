"""Bypasses closed in session 51 (behaviour 49: a command that runs what the checker
cannot see is asked about, never allowed): mail transfer agents.

``exim`` runs the ``${run{CMD}}`` of a string it expands (``-be``, ``-bem``, its input),
of the ACLs a ``-bh`` session goes through and of a configuration ``-C`` or ``-D``
gives, so any use is taken as running a command not looked into, as ``mail`` is.
``sendmail`` is exim, Postfix's, sendmail's or msmtp's under one name: any option but a
few plain ones (``-t``, ``-i``, ``-oi``, ``-f ADDR``, ``-F NAME``) may run one (exim's
``-be``, ``-C FILE``: a configuration whose mailer is a program, msmtp's
``--passwordeval``), and so may a recipient ``|CMD``. Postfix's tools load what a
configuration directory ``-c`` or ``MAIL_CONFIG`` names (``dynamicmaps.cf``), and
``postmulti -x`` runs a command. Each row goes through the real dispatcher (conftest
``judge``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")


@pytest.mark.parametrize(
    "command",
    [
        "exim -be '${run{/bin/rm x}}'", "exim4 -be", "echo '${run{rm x}}' | exim -be",
        "exim -bh 127.0.0.1 < session", "exim -C ./conf -bt u", "exim -DX=1 -bP",
        "exim -bem msg '${run{rm x}}'", "sudo exim4 -be x", "/usr/sbin/exim4 u < m",
        "sendmail -be '${run{rm x}}'", "sendmail -C ./sendmail.cf -bt",
        "sendmail -Cconf u", "sendmail -bh 1.2.3.4", "sendmail -oi -t -be x",
        "/usr/lib/sendmail -C cf u", "/usr/sbin/sendmail u -be x", "sendmail '|rm x'",
        "sendmail -t -f me '|rm x'", "msmtp --passwordeval='rm x' u",
        "msmtp -C ./rc u", "sendmail --file=rc u", "HOME=. msmtp u < m",
        "XDG_CONFIG_HOME=. sendmail u < m", "MAIL_CONFIG=. sendmail u < m",
        "mailq -be x", "newaliases -C x", "runq -be x", "rmail -C x u",
        "postmap -c ./conf hash:x", "postconf -c . -d", "MAIL_CONFIG=. postqueue -p",
        "postmulti -x rm x", "postfix -c ./conf status", "sendmail.postfix -C x u",
        "sendmail.exim -be x", "/usr/sbin/sendmail.sendmail -C cf u",
    ],
)  # fmt: skip
async def test_b51_mail_transfer_agents_run_what_they_are_given(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
    await refused(judge, DENY_RM, command)


@pytest.mark.parametrize(
    "command",
    [
        "sendmail -t < msg", "sendmail -oi -t < msg", "sendmail -f me@x u < msg",
        "sendmail -fme@x -F 'A B' u@x < msg", "/usr/sbin/sendmail -i -- u@x < m",
        "msmtp -a work u@x < msg", "sendmail -t -- -be < m", "mailq", "newaliases",
        "postqueue -p", "postconf -n", "postmap hash:virtual",
    ],
)  # fmt: skip
async def test_b51_plain_mail_submission_passes(judge, command):
    await allowed(judge, DENY_RM, command)
