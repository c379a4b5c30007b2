"""GNU ``parallel`` and ``sem``: the command they run, as a shell runs it.

``parallel git ::: push`` runs ``git push``: the words after parallel's options, up to
the first argument list (``:::``, ``:::+``, ``::::``, ``::::+``), are a command that
gets its arguments at run time, from those lists or from its input. They go where a
replacement string stands (``{}``, ``{.}``, ``{/}``, ``{1}``, ...) or, with none, at
the end; a ``{= perl =}`` one runs Perl here, so ``{=`` makes the command unknown.
parallel hands the command line to a shell, so its words are code (``parallel 'cat x;
rm {}' ::: y``). ``sem`` (``parallel --semaphore``) runs its
command once, through a shell too, with no arguments added.

``script`` gives that command as a shell line in which each place an argument goes is
``{}``, the hole ``_commands`` cuts a command's beginning at, as for ``find -exec``
(``Rule.could_continue`` then asks when a deny or ask pattern could match once the
arguments come). Options not known here (among them those that change the
replacement strings or the argument separators) make the command unknown: None, and
the caller takes it to be anything.

parallel reads its options with Perl's Getopt::Long (bundling, stopping at the first
operand), which differs from getopt in ways that make these unknown too: ``--eof`` and
``--max-lines`` take the next word for their value only when it looks like one (not
when it starts with ``-``; only a number), so they are not listed; a word starting with
``+`` is an option (``+k`` is ``--keep-order``); and a first word starting with
``--shebang`` or ``--hashbang`` makes parallel run itself again with its words given
to ``/bin/sh`` (``exec "$0 ... @ARGV"``), so those are not listed either. A long
option is known only by a name listed here, never shortened: Getopt::Long resolves a
shortened one among all of parallel's options, most of them not listed here
(``--ssh CMD``, the ssh command parallel runs, is no ``--sshlogin``).

parallel's remote options run commands and copy files: ``--ssh CMD``,
``--sshloginfile`` / ``--slf`` (sshlogins from a file), ``--controlmaster``,
``--transfer``, ``--transferfile``, ``--return``, ``--cleanup``, ``--trc``,
``--basefile``, ``--nonall``, ``--onall``, ``--filter-hosts`` are not listed. An
sshlogin (``-S`` / ``--sshlogin``) is ``[@groups/][ncpus/][sshcommand [options]]
[user[:password]@]host``, the sshcommand run by a shell, and ``..`` and ``-`` read
sshlogins from a file and from the input: only a list of plain ones (``host``,
``user@host:port``, ``8/host``, ``@group/host``, ``@group``, ``:``) is known
(``plain_sshlogins``).
"""

from __future__ import annotations

import re
from typing import Final

from dsh_permissions._getopt import Known, known_options

__all__ = ["PARALLELS", "SEPARATORS", "command_words", "plain_sshlogins", "script"]

PARALLELS: Final = frozenset({"parallel", "sem"})
#: what ends the command and starts a list of its arguments (``::::``: files of them)
SEPARATORS: Final = frozenset({":::", ":::+", "::::", "::::+"})
HOLE: Final = "{}"
#: a replacement string: ``{= perl expression =}``, or braces around no space
_REPLACEMENT: Final = re.compile(r"\{=.*?=\}|\{[^{}\s]*\}")
#: short options taking a value (attached or the next word)
_VALUE: Final = frozenset("adjPnNsSEL")
_FLAGS: Final = frozenset("0kqrtuvXmp")
_LONG_VALUE: Final = (
    *("--arg-file", "--delimiter", "--jobs", "--max-args", "--max-replace-args"),
    *("--max-chars", "--colsep", "--block", "--block-size", "--halt"),
    *("--timeout", "--joblog", "--results", "--tmpdir", "--workdir", "--wd", "--sshlogin"),
    *("--memfree", "--load", "--delay", "--retries", "--tagstring", "--id"),
    *("--header", "--env", "--nice", "--trim"),
)
_LONG_FLAGS: Final = (
    *("--pipe", "--pipepart", "--keep-order", "--quote", "--no-run-if-empty"),
    *("--verbose", "--dry-run", "--null", "--line-buffer", "--group", "--ungroup"),
    *("--tag", "--bar", "--eta", "--progress", "--xargs", "--shuf", "--will-cite"),
    *("--no-notice", "--semaphore", "--fg", "--bg", "--wait", "--lb", "--files"),
    *("--round-robin", "--linebuffer", "--keep", "--interactive"),
)
_KNOWN: Final = Known(_FLAGS, _VALUE, _LONG_FLAGS, _LONG_VALUE, shortened=False)
_SSHLOGINS: Final = frozenset({"S", "--sshlogin"})
#: opens a ``{= perl expression =}`` replacement string: parallel evaluates it here
_PERL: Final = "{="
#: one plain sshlogin: hostgroups, a number of CPUs, then ``:`` (this computer) or a
#: host with its user and port; no sshcommand, password, IPv6 address or ``-`` first
_PLAIN_SSHLOGIN: Final = re.compile(
    r"(@[A-Za-z0-9_.+-]+/?)?([0-9]+/)?(:|([A-Za-z0-9_][A-Za-z0-9_.-]*@)?"
    r"[A-Za-z0-9][A-Za-z0-9_.-]*(:[0-9]+)?)?"
)


def command_words(words: list[str], index: int) -> tuple[int, int] | None:
    """For parallel or sem at ``index``: ``(start, end)``, ``words[start:end]`` being
    the command it runs (empty: the arguments themselves are the commands). None when
    an option is not known or lacks its value, an sshlogin is not plain
    (``plain_sshlogins``), the first word after them starts with ``+`` (an option to
    Getopt::Long), or the command or an option's value holds ``{=`` (a ``{= perl =}``
    replacement string, which parallel evaluates on this computer: ``{= qx(rm y) =}``)."""
    found = known_options(words, index + 1, _KNOWN)
    if found is None or not all(
        plain_sshlogins(value or "") for name, value in found[1] if name in _SSHLOGINS
    ):
        return None
    i = found[0]
    if i < len(words) and words[i].startswith("+"):  # after -- too: stricter
        return None
    end = i
    while end < len(words) and words[end] not in SEPARATORS:
        end += 1
    if any(_PERL in word for word in words[index + 1 : end]):  # Perl run here
        return None
    return i, end


def plain_sshlogins(value: str) -> bool:
    """Whether the sshlogins ``value`` (split at commas, as parallel does) are all
    plain: none names an ssh command or reads sshlogins from elsewhere (``..``,
    ``-``). ``,,`` and ``\\,`` (a comma inside one) and a newline are not."""
    return all(login and _PLAIN_SSHLOGIN.fullmatch(login) is not None for login in value.split(","))


def script(program: str, words: list[str]) -> str:
    """The shell line parallel (``program``) runs for the command ``words``, each place
    an argument goes written ``{}``; ``sem`` adds no argument."""
    line = " ".join(words)
    if program == "sem":
        return line
    marked = _REPLACEMENT.sub(HOLE, line)
    return marked if marked != line or HOLE in line else f"{line} {HOLE}"
