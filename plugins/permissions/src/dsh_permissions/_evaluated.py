"""Bash builtins that run a string as code, and input given to a shell as its script.

``trap 'CMD' EXIT`` and ``mapfile -C CMD`` run a string as a script: ``_commands``
opens it the way it opens ``eval``'s words (``trap_action``, ``callback``). The rest
is syntax the splitter does not model, and a command using it is a problem (asked
about; in bypass mode denied when there are deny rules), as ``(( ))`` is:

- an array subscript holding ``$(...)`` or a backtick (``'a[$(CMD)]'``), whatever its
  quoting: bash evaluates subscripts as arithmetic and runs what they hold, in any word
  a builtin takes as a variable name or a number (``let``, ``test -v``/``-eq``,
  ``printf -v``/``%d``, ``read``, ``declare``, ``unset``, ``shift``, ``exit``, ...) and
  in an assignment (whose value a later arithmetic use evaluates);
- ``fc`` (runs its ``-e`` editor, then history entries), ``hash -p`` and ``BASH_CMDS``
  (a name runs another program), ``BASH_FUNC_*`` (an exported function), ``BASH_ENV``
  (a new bash sources it), ``PS4`` (``set -x`` expands it), ``alias`` and ``shopt -s
  expand_aliases`` (a name runs other words), ``enable`` (loads or hides builtins),
  and the integer attribute (``declare -i``: later assignments are evaluated);
- a shell's script, or the file ``source``/``.`` reads, that is its input (``-``,
  ``/dev/stdin``, ``/dev/fd/N``, ``/proc/*/fd/N``): what it runs is not in the line.
"""

from __future__ import annotations

import os
import re
from typing import Final

from dsh_permissions._shell import Word

__all__ = ["BUILTINS", "assigned", "callback", "from_input", "trap_action", "unmodelled"]

#: bash's builtins (``compgen -b``): only these (and assignments) evaluate subscripts
BUILTINS: Final = frozenset(
    {
        *(".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd"),
        *("command", "compgen", "complete", "compopt", "continue", "declare", "dirs"),
        *("disown", "echo", "enable", "eval", "exec", "exit", "export", "false", "fc"),
        *("fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local"),
        *("logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray"),
        *("readonly", "return", "set", "shift", "shopt", "source", "suspend", "test"),
        *("times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias"),
        *("unset", "wait"),
    }
)
#: ``[`` and later ``$(`` or a backtick: a subscript bash would run code in
_SUBSCRIPT: Final = re.compile(r"\[.*(\$\(|`)", re.DOTALL)
#: a word bash takes as an assignment (``x=1``, ``a[i]=1``, ``x+=1``)
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[.*\])?\+?=", re.DOTALL)
#: variables that make a name run other code (``BASH_CMDS[ls]=/bin/rm`` as ``hash -p``,
#: an exported function ``BASH_FUNC_ls%%``), that a new bash sources (``BASH_ENV``,
#: which may be ``/dev/stdin``) or that ``set -x`` expands (``PS4``)
_HOOKS: Final = re.compile(
    r"(BASH_CMDS|BASH_ALIASES|BASH_ENV|PS4)(\[.*|\+?=.*)?|BASH_FUNC_.*", re.DOTALL
)
_HOOK_NAMES: Final = re.compile(r"BASH_CMDS|BASH_ALIASES|BASH_ENV|PS4|BASH_FUNC_")
_HOOKED: Final = (
    "it sets BASH_CMDS, BASH_ALIASES, BASH_ENV, PS4 or an exported function (BASH_FUNC_), "
    "which make a name, a new shell or the trace of set -x run other code"
)
_DECLARING: Final = frozenset({"declare", "typeset", "local"})
_INPUT: Final = re.compile(r"/dev/stdin|/dev/fd/[^/]+|/proc/[^/]+(/task/[^/]+)?/fd/[^/]+")
_HOPS: Final = 8
#: mapfile's options that take a value
_VALUED: Final = frozenset("dnOsuCc")


def unmodelled(words: tuple[Word, ...]) -> str | None:
    """Why the builtin ``words[0]`` (with its arguments) runs code the analysis does not
    model, or None."""
    name = os.path.basename(words[0].text)
    args = [w.text for w in words[1:]]
    options = _options(args)
    if any(_SUBSCRIPT.search(w.text) for w in words):
        return (
            "bash evaluates an array subscript in it as arithmetic, running the "
            "command substitution it holds"
        )
    if any(_HOOK_NAMES.search(w.text) for w in words):  # declare -n r=BASH_CMDS too
        return _HOOKED
    if name == "hash" and "p" in options:
        return "hash -p makes a name run another program"
    if name == "fc":
        return "fc runs an editor command and then the commands of the shell's history"
    if name in ("alias", "enable") and args:
        return f"{name} changes what a command name runs"
    if name == "shopt" and "s" in options and "expand_aliases" in args:
        return "shopt -s expand_aliases makes aliases run other words"
    if name in _DECLARING and "i" in options:
        return f"{name} -i makes bash evaluate what is later assigned as arithmetic"
    return None


def assigned(words: tuple[Word, ...]) -> str | None:
    """Why an assignment among ``words`` (``x='a[$(CMD)]'``, ``a['$(CMD)']=1``) may run
    code, or None: bash evaluates the subscript, or the value where it is later used as
    a number."""
    for word in words:
        if "=" in word.text and _HOOKS.fullmatch(word.text):
            return _HOOKED
        if _ASSIGNMENT.match(word.text) and _SUBSCRIPT.search(word.text):
            return (
                f"{word.raw!r} assigns an array subscript holding a command substitution, "
                "which bash runs when it evaluates it as arithmetic"
            )
    return None


def trap_action(args: tuple[Word, ...]) -> tuple[Word, ...]:
    """The script ``trap ARGS`` runs when a signal comes (empty: none)."""
    rest = list(args)
    if rest and rest[0].text == "--":
        rest = rest[1:]
    elif rest and rest[0].text.startswith("-") and rest[0].text != "-":
        return ()  # -l, -p: lists
    if len(rest) < 2 or rest[0].text == "-":
        return ()  # resets, or a lone signal
    return (rest[0],)


def callback(args: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """The ``-C`` callback of ``mapfile``/``readarray ARGS`` (None: none)."""
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--" or not text.startswith("-") or text == "-":
            return None
        for position, letter in enumerate(text[1:], 2):
            if letter in _VALUED:
                value = text[position:]
                if letter == "C":
                    if value:
                        return (Word(value, args[index].raw, dynamic=args[index].dynamic),)
                    return args[index + 1 : index + 2]
                index += 0 if value else 1  # the value is the next word
                break
        index += 1
    return None


def from_input(text: str, root: str) -> bool:
    """Whether the file ``text`` names is the shell's input (``-``, ``/dev/stdin``,
    ``/dev/fd/0``, ``/proc/self/fd/0``, through symlinked directories too)."""
    if text == "-":
        return True
    path = os.path.join(root, text)
    try:
        for _ in range(_HOPS):
            where = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
            if _INPUT.fullmatch(os.path.normpath(where)):
                return True
            if not os.path.islink(where):
                return False
            path = os.path.join(os.path.dirname(where), os.readlink(where))
    except (OSError, ValueError):
        pass  # a directory it cannot look into: fail closed
    return True  # or a chain of links too long to follow


def _options(args: list[str]) -> str:
    """The letters of the short options before the operands."""
    letters: list[str] = []
    for arg in args:
        if arg == "--" or not arg.startswith(("-", "+")) or arg in ("-", "+"):
            break
        if arg.startswith("-"):
            letters.append(arg[1:])
    return "".join(letters)
