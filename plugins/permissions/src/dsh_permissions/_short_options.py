"""A bash builtin's options (``read``, ``printf -v``, ``mapfile -C``, ``compgen``:
``split_args``), read as getopt reads short ones (``_getopt.short_cluster``).
"""

from __future__ import annotations

from typing import NamedTuple

from dsh_permissions._getopt import short_cluster
from dsh_permissions._shell_words import Word

__all__ = ["Args", "split_args"]


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
