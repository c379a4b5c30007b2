"""Commands that get more words at run time: what ``xargs`` runs, and ``find -exec``.

``echo push | xargs git`` runs ``git push``: xargs adds the words of its input to the
command it is given (or, with ``-I R`` / ``-i`` / ``--replace`` / BSD ``-J R``, puts
each input line where ``R`` stands), and ``find -exec git {} \\;`` puts each file name
where ``{}`` stands. The text deny and ask rules see (``git``) is then only the
beginning of what runs. ``open_prefixes`` gives that beginning: the text up to the
first place a word may be added; ``_decide`` asks about the command when a deny or ask
pattern could match a text beginning so (``Rule.could_continue``).

xargs's options are those of GNU and BSD xargs; an option not known here makes the
command's beginning unknown (the prefix ``""``, which every pattern could continue).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from dsh_permissions._getopt import Known, known_options

__all__ = [
    "FIND_HOLE",
    "INPUT",
    "MAX_XARGS",
    "OPEN_CHARS",
    "XARGS_DEFAULT",
    "open_prefixes",
    "xargs_command",
]

#: what find -exec replaces by each file name
FIND_HOLE: Final = "{}"
#: stands for the words xargs adds at the end (a NUL byte: no word of a command holds one)
INPUT: Final = "\x00"
#: how many xargs may be the program of one command (``xargs xargs ...``): more are
#: taken to make it anything (each costs the length of the command to read)
MAX_XARGS: Final = 4
#: the characters of a beginning kept: a longer one is cut here, which can only make
#: more patterns match it (``TextPattern.could_continue``), never fewer
OPEN_CHARS: Final = 4096
#: the command xargs runs when given none
XARGS_DEFAULT: Final = "echo"
_DEFAULT_REPLACE: Final = "{}"
#: short options taking a value (attached or the next word); GNU and BSD
_VALUE: Final = frozenset("aEILnPsdJRS")
#: short options whose value, if any, is attached (GNU ``-i[R]``, ``-e[EOF]``, ``-l[N]``)
_OPTIONAL: Final = frozenset("eil")
_FLAGS: Final = frozenset("0prtxo")
_REPLACING: Final = frozenset("IJ")
_LONG_VALUE: Final = (
    *("--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars"),
    "--process-slot-var",
)
#: long options whose value, if any, follows ``=``
_LONG_OPTIONAL: Final = ("--replace", "--eof", "--max-lines")
_LONG_FLAGS: Final = (
    *("--null", "--interactive", "--no-run-if-empty", "--verbose", "--exit"),
    *("--open-tty", "--show-limits", "--help", "--version"),
)
_KNOWN: Final = Known(_FLAGS, _VALUE, _LONG_FLAGS, _LONG_VALUE, _OPTIONAL, _LONG_OPTIONAL)


def xargs_command(words: list[str], index: int) -> tuple[int, str | None] | None:
    """For xargs at ``index``: the index of the command it runs (``len(words)``: none,
    so ``echo``) and the string its input replaces (None: input words are added at the
    end). None when an option is not known (or lacks its value)."""
    found = known_options(words, index + 1, _KNOWN)
    if found is None:
        return None
    replace: str | None = None
    for name, value in found[1]:
        if name == "--replace":
            replace = _DEFAULT_REPLACE if value is None else value
        elif name == "i":
            replace = value or _DEFAULT_REPLACE
        elif name in _REPLACING:
            replace = value
    return found[0], replace


def open_prefixes(readings: Iterable[str | None], hole: str) -> list[str]:
    """The beginnings of the texts ``readings`` may become at run time: each cut at
    its first ``hole`` (a reading without it does not change). A None reading (too
    many words to tell the command) could become anything: ``""``."""
    out: list[str] = []
    for reading in readings:
        if reading is None:
            out.append("")
        elif (at := reading.find(hole)) >= 0:
            out.append(reading[:at])
    return out
