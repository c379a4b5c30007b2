"""Words at the start of a command that a shell takes for syntax, not for its program.

bash's reserved words that open a compound command (``if``, ``for``, ``{``, ...:
``KEYWORDS``) are not modelled: the splitter refuses them. The precommand words of
other shells run the command after them: zsh's ``noglob``, ``nocorrect`` and ``-``,
fish's ``and``, ``or`` and ``not``, and zsh's and csh's ``repeat N`` (``fish -c 'true;
and rm x'`` runs ``rm x``). A ``-c`` script is split as bash's whatever the shell, so
they are taken off the command (``program_first``), as bash's ``!`` is: in bash they
would name a program that does not exist, so nothing is lost. A compound command one
opens is refused as well.
"""

from __future__ import annotations

from typing import Final

from dsh_permissions._shell_words import Unparseable, Word
from dsh_permissions._wrappers import skip_assignments

__all__ = ["KEYWORDS", "PREFIXES", "program_first"]

KEYWORDS: Final = frozenset(
    {
        *("if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done"),
        *("case", "esac", "select", "function", "coproc", "{", "}", "[[", "]]"),
    }
)
#: precommand words of zsh and fish: the command after them runs
PREFIXES: Final = frozenset({"noglob", "nocorrect", "-", "and", "or", "not"})
#: ``repeat N COMMAND`` (zsh, csh): the count is taken off too
_COUNTED: Final = "repeat"


def program_first(words: tuple[Word, ...]) -> tuple[Word, ...]:
    """``words`` (a command's: assignments first) with the precommand words of other
    shells before its program taken off; raises ``Unparseable`` when a reserved word
    follows them."""
    start = index = skip_assignments([w.raw for w in words])
    while index < len(words):
        if words[index].text in PREFIXES:
            index += 1
        elif words[index].text == _COUNTED and index + 1 < len(words):
            index += 2
        else:
            break
    if index == start:
        return words
    if index < len(words) and not words[index].quoted and words[index].text in KEYWORDS:
        raise Unparseable(
            f"the shell keyword {words[index].text!r} (compound commands are not supported)"
        )
    return (*words[:start], *words[index:])
