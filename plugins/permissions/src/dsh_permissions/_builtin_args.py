"""A bash builtin's arguments, split the way its getopt-like parser splits them.

``read -rp PROMPT -a NAME``, ``printf -vNAME``, ``mapfile -tC CMD``: short options come
first, may be clustered (``-rs``), and a letter that takes a value takes the rest of
its word or, when that is empty, the next word. ``--`` or the first word not starting
with ``-`` (or ``+``, for ``declare +x``) ends them; the rest are operands.
"""

from __future__ import annotations

from typing import NamedTuple

from dsh_permissions._shell_words import Word

__all__ = ["Args", "split_args"]


class Args(NamedTuple):
    #: the option letters given with ``-`` (``+x`` words take an attribute off: not here)
    flags: str
    #: each option that takes a value, with its value (attached or the next word)
    values: tuple[tuple[str, Word], ...]
    operands: tuple[Word, ...]

    def valued(self, letter: str) -> tuple[Word, ...]:
        """The values given to the option ``letter``."""
        return tuple(word for found, word in self.values if found == letter)


def split_args(args: tuple[Word, ...], valued: str) -> Args:
    """``args`` split into options and operands; ``valued``: the letters that take a
    value."""
    flags: list[str] = []
    values: list[tuple[str, Word]] = []
    index = 0
    while index < len(args):
        word = args[index]
        text = word.text
        if text == "--":
            index += 1
            break
        if not text.startswith(("-", "+")) or text in ("-", "+"):
            break
        index += 1
        for position, letter in enumerate(text[1:], 2):
            if text[0] == "-":
                flags.append(letter)
            if letter in valued:
                if rest := text[position:]:
                    values.append((letter, Word(rest, word.raw, dynamic=word.dynamic)))
                elif index < len(args):
                    values.append((letter, args[index]))
                    index += 1
                break
    return Args("".join(flags), tuple(values), args[index:])
