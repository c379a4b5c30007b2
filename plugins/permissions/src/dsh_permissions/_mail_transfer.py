"""Mail transfer agents under the names mail is submitted by (``sendmail``, ``mailq``,
``newaliases``, ...: exim, Postfix's, sendmail's, msmtp's): which of their words may run
a command (``submission_runs``). One name stands for any of them, so an option is plain
only when it is in each: exim's ``-be`` expands ``${run{CMD}}``, ``-bh`` runs the ACLs,
``-C FILE`` gives sendmail a configuration whose mailer is a program, msmtp's
``--passwordeval`` runs one; a recipient ``|CMD`` is a program to deliver to.
"""

from __future__ import annotations

from typing import Final

__all__ = ["SUBMITTERS", "submission_runs"]

#: the names mail is submitted or the queue listed by (exim takes its mode from its
#: name), and those the alternatives system gives sendmail (Fedora, RHEL)
SUBMITTERS: Final = frozenset(
    {"sendmail", "mailq", "newaliases", "rmail", "rsmtp", "runq", "msmtp"}
    | {"sendmail.postfix", "sendmail.sendmail", "sendmail.exim"}
)
#: the options known to run nothing in each (flags, and those taking a value)
_PLAIN_FLAGS: Final = frozenset({"-t", "-i", "-oi", "-ti", "-v"})
_PLAIN_VALUED: Final = frozenset({"-f", "-F", "-r", "-a"})


def submission_runs(args: list[str]) -> str | None:
    """The word of a submitter's ``args`` that may make it run a command, or None: an
    option not known to be plain (before ``--``, also after a recipient: getopt reads
    on), or a recipient starting with ``|``."""
    options = True
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if options and word == "--":
            options = False
        elif options and word.startswith("-") and word != "-":
            if word[:2] in _PLAIN_VALUED:
                index += len(word) == 2  # the value is the next word
            elif word not in _PLAIN_FLAGS:
                return word
        elif word.startswith("|"):
            return word
    return None
