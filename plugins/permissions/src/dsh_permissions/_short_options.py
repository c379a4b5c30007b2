"""Short options, the way getopt reads them: ``-rs`` is ``-r -s``, and a letter that
takes a value takes the rest of its word or, when that is empty, the next word
(``-vNAME``, ``-v NAME``). Shared by bash's builtins (``read``, ``printf -v``,
``mapfile -C``, ``compgen``: ``split_args``) and the programs whose command is found
behind their options (``xargs``, ``parallel``: ``short_cluster``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from dsh_permissions._shell_words import Word

__all__ = ["Args", "short_cluster", "split_args"]

#: each option of a cluster with its value ("" for a flag)
Options = tuple[tuple[str, str], ...]


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
        letter, value = word[j], word[j + 1 :]
        if letter in optional:
            return i, (*found, (letter, value))
        if letter in valued:
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


class Args(NamedTuple):
    """A bash builtin's arguments: options first (``--`` or the first word not starting
    with ``-``, or ``+`` as in ``declare +x``, ends them), then operands."""

    #: the option letters given with ``-`` (``+x`` takes an attribute off: not here)
    flags: str
    #: each option that takes a value, with its value
    values: tuple[tuple[str, Word], ...]
    operands: tuple[Word, ...]

    def valued(self, letter: str) -> tuple[Word, ...]:
        """The values given to the option ``letter``."""
        return tuple(word for found, word in self.values if found == letter)


def split_args(args: tuple[Word, ...], valued: str) -> Args:
    """A builtin's ``args`` split; ``valued``: the letters that take a value (one given
    none, at the end, is still among the flags: ``mapfile -C``)."""
    texts = [w.text for w in args]
    flags: list[str] = []
    values: list[tuple[str, Word]] = []
    index = 0
    while index < len(args):
        text = texts[index]
        if text == "--":
            index += 1
            break
        if not text.startswith(("-", "+")) or text in ("-", "+"):
            break
        found = short_cluster(texts, index, None, valued)
        if found is None:  # a value missing at the end
            flags += list(text[1:]) if text[0] == "-" else []
            index = len(args)
            break
        last, options = found
        if text[0] == "-":
            flags += [letter for letter, _ in options]
        for letter, value in options:
            if letter in valued:
                word = args[last]  # the next word, or the rest of this one
                attached = Word(value, word.raw, dynamic=word.dynamic)
                values.append((letter, word if last > index else attached))
        index = last + 1
    return Args("".join(flags), tuple(values), args[index:])
