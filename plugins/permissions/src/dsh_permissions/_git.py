"""git's global options, which stand between ``git`` and its subcommand.

``git -C . push``, ``git -c core.pager=less push`` and ``git --no-pager push`` run
``git push``, but their text does not start with it: a rule ``ask: bash(git push*)``
would miss them. Deny and ask rules are also checked against the command with git's
global options left out (allow rules are not: an option such as ``-c core.pager=...``
changes what an allowed command runs).
"""

from __future__ import annotations

from typing import Final

__all__ = ["subcommand", "without_global_options"]

#: global options whose value is the next word (``git -C dir``, ``git --git-dir dir``);
#: every other option is one word (``--no-pager``, ``--git-dir=dir``). git refuses an
#: option it does not know, and runs nothing then.
_VALUED: Final = frozenset(
    {
        *("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix"),
        *("--config-env", "--attr-source"),
    }
)


def subcommand(words: list[str]) -> list[str]:
    """``SUBCOMMAND ARGS...`` for ``words`` = ``git [global options] SUBCOMMAND
    ARGS...`` (empty when there is no subcommand: ``git --version``)."""
    index = 1
    while index < len(words) and words[index].startswith("-"):
        index += 2 if words[index] in _VALUED else 1
    return words[index:]


def without_global_options(words: list[str]) -> list[str] | None:
    """``git SUBCOMMAND ARGS...`` for ``words`` = ``git [global options] SUBCOMMAND
    ARGS...``, or None when there are no global options (or no subcommand)."""
    rest = subcommand(words)
    if not rest or len(rest) == len(words) - 1:
        return None
    return [words[0], *rest]
