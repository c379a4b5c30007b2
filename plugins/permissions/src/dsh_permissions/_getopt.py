"""Reading a program's words as GNU getopt does, for the tables that say what is
special about each program (``_wrapper_grammar``, ``_command_options``, ``_git``,
``_xargs``, ``_parallel``, bash's builtins in ``_short_options``).

- ``-rs`` is ``-r -s``; a letter that takes a value ends the cluster and takes the
  rest of its word or, when that is empty, the next word (``-vNAME``, ``-v NAME``);
- ``--name=VALUE``, or ``--name VALUE`` for a long option that takes a value; a long
  option may be shortened (``--to-com`` is ``--to-command``: ``long_option``);
- ``--`` ends the options; every other word is an operand (``-`` too), and options may
  follow operands (GNU's order): a caller that stops at the first operand stops
  reading (``scan`` is lazy), so the words are read once.

Three readings: ``scan`` takes any option (what it does not know takes no value);
``known_options`` refuses one it does not know (xargs, parallel: None; parallel's
long options only by the names listed, none shortened: ``Known.shortened``); ``may_give``
is generous, a letter anywhere in a cluster (git's subcommand options), so it may
find an option where getopt would see a value: stricter."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import NamedTuple

__all__ = [
    "END",
    "OPERAND",
    "Known",
    "Options",
    "Read",
    "known_long",
    "known_options",
    "long_in",
    "long_option",
    "may_give",
    "scan",
    "short_cluster",
]

#: each option of a cluster with its value ("" for a flag)
Options = tuple[tuple[str, str], ...]
#: ``Read.option`` of ``--`` (no option's name: ``--=x`` is the long option ``--``),
#: and of an operand
END = "end of options"
OPERAND = ""


def long_option(word: str, full: str) -> bool:
    """Whether ``word`` is the long option ``full``, maybe shortened (getopt takes
    any unambiguous prefix: ``--split=...`` is ``--split-string=...``), with or without
    ``=value``. Generous: any prefix of three characters or more counts."""
    name = word.split("=", 1)[0]
    return len(name) >= 3 and full.startswith(name)


def long_in(word: str, names: Iterable[str]) -> bool:
    """Whether ``word`` is one of the long options ``names`` (``long_option``)."""
    return any(long_option(word, full) for full in names)


def known_long(
    word: str,
    valued: Sequence[str],
    flags: Sequence[str],
    optional: Sequence[str] = (),
    *,
    shortened: bool = True,
) -> tuple[str, int] | None:
    """The long option of a program's that ``word`` gives, of those taking a value, no
    value or (``optional``) one after ``=`` only: its full name (the one named exactly,
    else, when ``shortened``, the one it shortens) and how many words after ``word`` it
    takes (its value when not given after ``=``). None when it gives none, several, or
    a flag given a value: not known."""
    name, equals, _ = word.partition("=")
    names = (*valued, *optional, *flags)
    known = [f for f in names if f == name]
    if not known and shortened:
        known = [f for f in names if long_option(name, f)]
    if len(known) != 1 or (equals and known[0] in flags):
        return None
    return known[0], int(known[0] in valued and not equals)


def may_give(word: str, option: str) -> bool:
    """Whether ``word`` may give ``option``, read generously: a long one maybe shortened
    (``long_option``), a short one's letter anywhere in a cluster (``-nx``: even after a
    letter taking a value, whose value it may be)."""
    if option.startswith("--"):
        return long_option(word, option)
    return word.startswith("-") and not word.startswith("--") and option[1] in word


def short_cluster(
    words: Sequence[str],
    i: int,
    flags: Collection[str] | None,
    valued: Collection[str],
    optional: Collection[str] = (),
) -> tuple[int, Options] | None:
    """The cluster of short options ``words[i]``: the index of its last word (a value
    may be the next word) and its options. ``optional``: letters whose value, if any,
    is attached. None when a letter is neither a flag (any letter not valued when
    ``flags`` is None), valued nor optional, or a value is missing."""
    word = words[i]
    found: list[tuple[str, str]] = []
    for j in range(1, len(word)):
        letter = word[j]
        if letter in optional:
            return i, (*found, (letter, word[j + 1 :]))
        if letter in valued:
            value = word[j + 1 :]  # cut out only here: a long cluster costs its length
            if not value:
                i += 1
                if i >= len(words):
                    return None
                value = words[i]
            return i, (*found, (letter, value))
        if flags is not None and letter not in flags:
            return None
        found.append((letter, ""))
    return i, tuple(found)


class Known(NamedTuple):
    """All the options of a program read strictly (``known_options``)."""

    flags: Collection[str]
    valued: Collection[str]
    long_flags: Sequence[str]
    long_valued: Sequence[str]
    #: options whose value, if any, is attached (short) or after ``=`` (long)
    optional: Collection[str] = ()
    long_optional: Sequence[str] = ()
    #: whether a long option may be shortened: not when the tables hold only some of
    #: the program's options, of which a shortened one may be another (parallel's
    #: ``--ssh`` is no ``--sshlogin``); each spelling is then listed
    shortened: bool = True


def known_options(
    words: Sequence[str], start: int, known: Known
) -> tuple[int, list[tuple[str, str | None]]] | None:
    """The index of the first operand from ``words[start]`` on (after ``--``, which
    ends the options) and the options before it, each a letter or a long option's full
    name with its value ("" or None: none given). None when one of them is not
    ``known``, or lacks its value."""
    found: list[tuple[str, str | None]] = []
    i = start
    while i < len(words):
        word = words[i]
        if word == "--":
            return i + 1, found
        if not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            name = known_long(
                word,
                known.long_valued,
                known.long_flags,
                known.long_optional,
                shortened=known.shortened,
            )
            if name is None or i + name[1] >= len(words):
                return None
            _, equals, value = word.partition("=")
            found.append((name[0], words[i + 1] if name[1] else value if equals else None))
            i += name[1]
        else:
            cluster = short_cluster(words, i, known.flags, known.valued, known.optional)
            if cluster is None:
                return None
            i, options = cluster
            found += options
        i += 1
    return i, found


class Read(NamedTuple):
    """One option, ``--`` or operand that ``scan`` reads."""

    #: the index of its word
    at: int
    #: ``-x`` (one letter of a cluster), ``--name`` as written (before any ``=``),
    #: ``END`` or ``OPERAND``
    option: str
    #: the value it is given: attached, or the next word (``last`` is then past
    #: ``at``); None: it takes none, or the words end before it
    value: str | None = None
    #: the index of the last word it uses
    last: int = -1


def scan(
    words: Sequence[str], start: int, valued: Collection[str] = "", long_valued: Sequence[str] = ()
) -> Iterator[Read]:
    """Read ``words[start:]`` as getopt does (see the module), given the letters and
    long options that take a value. A cluster's letters come one by one, up to the
    one that takes a value; after ``--``, only operands."""
    i = start
    while i < len(words):
        word = words[i]
        if word == "--":
            yield Read(i, END, last=i)
            yield from (Read(j, OPERAND, last=j) for j in range(i + 1, len(words)))
            return
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            if equals:
                yield Read(i, name, value, i)
            elif long_in(name, long_valued) and i + 1 < len(words):
                yield Read(i, name, words[i + 1], i + 1)
                i += 1
            else:
                yield Read(i, name, last=i)
        elif word.startswith("-") and word != "-":
            found = short_cluster(words, i, None, valued)
            last, options = found or (i, tuple((letter, "") for letter in word[1:]))
            for letter, value in options:
                given = value if letter in valued and found else None
                yield Read(i, "-" + letter, given, last)
            i = last
        else:
            yield Read(i, OPERAND, last=i)
        i += 1
