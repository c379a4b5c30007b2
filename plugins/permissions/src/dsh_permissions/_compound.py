"""A compound array assignment given to a declaration builtin as a word.

``a=(...)`` is syntax the splitter does not model, but bash also takes a quoted one
given to ``declare`` for an array: ``declare -a a='($(rm x))'`` is read again as
``a=($(rm x))`` and runs ``rm x``, as do ``typeset``, ``local``, ``readonly -a`` and
``export -a``, and ``declare a='(...)'`` when ``a`` is an array already. The value is
taken after the expansions of the word: ``x='($(rm x))'; declare -a a="$x"`` runs it
too, and so does ``declare -a "$x"`` with ``x='a=(...)'``.

So (``_evaluated.unmodelled``) ``declare``, ``typeset`` and ``local`` given ``-a`` or
``-A`` (``readonly`` and ``export`` too), or assigning a name that may be an array, are
a problem when a value starts with ``(``, or may start with one once the shell expands
it (it begins with an expansion: ``$x``, ``"$x"``, ``$(...)``, ``$'...'``, a brace,
...); and ``declare``, ``typeset`` and ``local`` also when an operand is only known
when the shell runs (``declare "$x"``: it may assign ``DIRSTACK=(...)``). A value that
starts with a plain character (``x=a$y``, ``PATH=/x:$PATH``) is not. A name may be an
array when it is one of bash's (``DIRSTACK``, ``PIPESTATUS``, ...) or the line may
have made it one before: ``declare -a NAME`` (any declaration builtin given ``-a`` or
``-A``, also through a nameref, ``declare -n r=NAME``), ``read -a NAME``, ``mapfile
NAME`` (``MAPFILE``), ``readarray``. A sourced file is not looked into.
"""

from __future__ import annotations

import re
from typing import Final

from dsh_permissions._option_variables import note, set_in_line
from dsh_permissions._shell_words import Word
from dsh_permissions._short_options import split_args

__all__ = ["compound"]

#: the builtins that may take a value for an array (any name may be one already)
_ALWAYS: Final = frozenset({"declare", "typeset", "local"})
#: those that do only when given ``-a`` or ``-A``
_GIVEN_ARRAY: Final = frozenset({"readonly", "export"})
#: bash's own arrays
_ARRAYS: Final = frozenset(
    {
        *("BASH_ALIASES", "BASH_ARGC", "BASH_ARGV", "BASH_CMDS", "BASH_LINENO"),
        *("BASH_REMATCH", "BASH_SOURCE", "BASH_VERSINFO", "COMP_WORDS", "COPROC"),
        *("DIRSTACK", "FUNCNAME", "GROUPS", "PIPESTATUS", "MAPFILE"),
    }
)
#: the options of ``read`` and ``mapfile`` that take a value
_READ_VALUED: Final = "adinNptu"
_MAPFILE_VALUED: Final = "dnOsuCc"
_ASSIGNMENT: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[.*\])?\+?=", re.DOTALL)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: the first character of a value whose expansion cannot start with ``(``
_PLAIN: Final = re.compile(r"[A-Za-z0-9_/.,:@%+=-]")
_WHY: Final = (
    "bash reads a value in parentheses given to {name} for an array ({name} -a "
    "a='(...)', also one only known when the shell runs) as the words of a=(...), "
    "running the command substitutions they hold"
)


def compound(name: str, args: tuple[Word, ...]) -> str | None:
    """Why the builtin ``name ARGS`` may assign an array from words bash reads again
    (see the module), or None; notes the arrays it makes for the rest of the line."""
    if name == "read":
        _made(split_args(args, _READ_VALUED).valued("a"))
        return None
    if name in ("mapfile", "readarray"):
        _made(split_args(args, _MAPFILE_VALUED).operands or (Word("MAPFILE", "MAPFILE"),))
        return None
    if name not in _ALWAYS and name not in _GIVEN_ARRAY:
        return None
    found = split_args(args, "")
    arrays = bool(set(found.flags) & {"a", "A"})
    if name in _GIVEN_ARRAY and not arrays:
        return None
    if arrays or "n" in found.flags:  # declare -a NAME; declare -n r=NAME: r may be one
        _made(found.operands)
    for word in found.operands:
        assignment = _ASSIGNMENT.match(word.text)
        if assignment is None:
            if word.dynamic:  # declare "$x": x may hold a=(...)
                return _WHY.format(name=name)
            continue
        if assignment.group(2):  # declare 'a[0]=x' makes a an array
            _made((word,))
        if not (arrays or _array(assignment.group(1))):
            continue
        value = word.text[assignment.end() :]
        if value.startswith("(") or (word.dynamic and not _PLAIN.match(value)):
            return _WHY.format(name=name)
    return None


def _made(words: tuple[Word, ...]) -> None:
    """Note the arrays ``words`` name (``a``, ``a=x``, ``a[0]=x``) for the line."""
    names = (found.group() for w in words if (found := _NAME.match(w.text)) is not None)
    note([], (f"{name}[]" for name in names))


def _array(name: str) -> bool:
    """Whether the variable ``name`` may be an array (bash's, or made so earlier)."""
    return name in _ARRAYS or set_in_line((f"{name}[]",), anything=False)
