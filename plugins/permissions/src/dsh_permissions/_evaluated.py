"""Bash builtins that run a string as code, and input given to a shell as its script.

``trap 'CMD' EXIT``, ``mapfile -C CMD`` and ``compgen -C CMD`` run a string as a script,
and ``compgen -W WORDS`` expands its words as the shell would: ``_commands`` opens them
the way it opens ``eval``'s words (``trap_action``, ``callback``, ``completions``). The
rest is syntax the splitter does not model, and a command using it is a problem (asked
about; in bypass mode denied when there are deny rules), as ``(( ))`` is:

- an array subscript holding ``$(...)`` or a backtick (``'a[$(CMD)]'``), whatever its
  quoting, in a word a builtin takes as a variable name (``test -v``/``[ -v``,
  ``printf -v``, ``read``, ``declare``/``typeset``/``local``, ``unset``: bash 5.2 runs
  it there; ``export``, ``readonly``, ``mapfile``, ``wait -p`` and ``getopts`` are
  treated the same) or in an assignment (whose value a later arithmetic use evaluates).
  ``test x -eq 1``, ``printf %d``, ``shift`` and ``exit`` take a plain number and run
  nothing; ``echo``, ``cd`` and the like never evaluate their words;
- a quoted array given to ``declare`` (``typeset``, ``local``, ``readonly -a``,
  ``export -a``) for an array: ``declare -a a='($(CMD))'`` runs CMD (``_compound``);
- what evaluates a value the line may have filled in before (``read x <<< ...``,
  ``printf -v x ...``): ``let`` with any operand, and a subscript holding a name
  (``test -v 'a[x]'``) in those name operands, since bash evaluates the variable's
  value, subscripts and all;
- setting a variable bash gives the integer attribute itself (``RANDOM``, ``SRANDOM``,
  ``OPTIND``, ``HISTCMD``, ``SECONDS``), which evaluates the value at once as ``let``
  does: any ``printf -v``, ``read``, ``mapfile``/``readarray``, ``wait -p`` or
  ``getopts`` naming one, a nameref to one (``declare -n r=RANDOM``), and an assignment
  to one (``RANDOM=x``, ``export OPTIND=x``) of anything but a plain decimal number;
- ``fc`` (runs its ``-e`` editor, then history entries), ``history -a``/``-n``/``-r``/
  ``-w`` and ``bind -f`` (read or write a file the rules do not see), ``hash -p`` and
  ``BASH_CMDS`` (a name runs another program), ``BASH_FUNC_*`` (an exported
  function), ``BASH_ENV`` and ``ENV`` (a new bash, an interactive sh, sources it:
  ``/dev/stdin`` too), ``PS4`` holding a substitution (``set -x`` expands it),
  ``HISTFILE`` (bash writes the history there as it exits), alias definitions and
  ``shopt -s expand_aliases`` (sh and bash in POSIX mode expand aliases in scripts), ``enable``
  other than listing (loads or hides builtins), ``compgen -F`` (runs a function) and
  the integer attribute (``declare -i``: later assignments are evaluated);
- a shell's script, its ``--rcfile``/``--init-file``, or the file ``source``/``.``
  reads, that is its input (``_shell_input``): what it runs is not in the line.
"""

from __future__ import annotations

import os
import re
from typing import Final

from dsh_permissions._compound import compound
from dsh_permissions._shell import Word
from dsh_permissions._short_options import split_args

__all__ = [
    "BUILTINS",
    "assigned",
    "callback",
    "completions",
    "set_names",
    "trap_action",
    "unmodelled",
]

#: bash's builtins (``compgen -b``)
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
_DECLARING: Final = frozenset({"declare", "typeset", "local", "export", "readonly"})
#: the options of each builtin taking variable names that take a value
_VALUED: Final = {"read": "adinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"}
_VALUED_COMPGEN: Final = "oAGWFCXPS"
_VALUED_BIND: Final = "mqurfx"
#: history's options that read or write a file (its operand, else ``HISTFILE``)
_HISTORY_FILE: Final = "anrw"
#: a word bash takes as an assignment (``x=1``, ``a[i]=1``, ``x+=1``)
_ASSIGNMENT: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[.*\])?\+?=", re.DOTALL)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: variables that make a name run other code (``BASH_CMDS[ls]=/bin/rm`` as ``hash -p``,
#: an exported function ``BASH_FUNC_ls%%``), that a new shell sources (``BASH_ENV``,
#: ``ENV``, which may be ``/dev/stdin``), that ``set -x`` expands (``PS4``), or that
#: sends ``cd NAME`` elsewhere than ``./NAME`` (``CDPATH``: the check reads ``./NAME``),
#: or names a file bash writes (``HISTFILE``: the history, as it exits)
_HOOK: Final = re.compile(
    r"BASH_CMDS|BASH_ALIASES|BASH_ENV|ENV|PS4|CDPATH|HISTFILE|BASH_FUNC_.*", re.DOTALL
)
#: variables bash gives the integer attribute, which evaluate what is assigned to them
#: as arithmetic (a value ``a[$(CMD)]`` runs CMD, a value ``x`` evaluates x's value)
_EVALUATING: Final = frozenset({"RANDOM", "SRANDOM", "OPTIND", "HISTCMD", "SECONDS"})
_EVALUATES: Final = (
    "it sets RANDOM, SRANDOM, OPTIND, HISTCMD or SECONDS, whose value bash evaluates "
    "as arithmetic at once (as let does), and the value, or a variable it names, may "
    "hold a subscript that runs a command"
)
_DECIMAL: Final = re.compile(r"-?[0-9]+")
#: what setting each hook variable does (``_hooked``), said of the ones a line sets
_HOOKS: Final = {
    "BASH_CMDS": "makes a command name run another program",
    "BASH_ALIASES": "makes a command name run other words",
    "BASH_ENV": "names a file a new bash runs first",
    "ENV": "names a file a new interactive sh (or bash --posix) runs first",
    "PS4": "is expanded by set -x before each command, running what it substitutes",
    "CDPATH": "sends cd NAME elsewhere than ./NAME, where the rest of the line is checked",
    "HISTFILE": "names the file bash writes its history to as it exits (set -o history)",
}
_EXPORTED: Final = "makes a command name run an exported function"
_RUNS: Final = (
    "bash evaluates an array subscript in it as arithmetic, running the command "
    "substitution it holds"
)
_INDIRECT: Final = (
    "bash evaluates a variable named in an array subscript as arithmetic, and its value "
    "(which the line may have filled in) may hold a subscript that runs a command"
)
#: what makes PS4's expansion run or evaluate something (``${a[x]}``, ``${x:y}``,
#: ``${x@P}``: all but a plain ``${NAME}``)
_EXPANDS: Final = ("$(", "`", "${", "$[")
_PLAIN: Final = re.compile(r"\$\{#?[A-Za-z_][A-Za-z0-9_]*\}")
#: an ``ENV`` value that names no path: a program's own setting (``ENV=production``)
_PLAIN_NAME: Final = re.compile(r"[A-Za-z0-9_.+,:@%-]+")


def unmodelled(words: tuple[Word, ...]) -> str | None:
    """Why the builtin ``words[0]`` (with its arguments) runs code the analysis does not
    model, or None."""
    name = os.path.basename(words[0].text)
    args = words[1:]
    if name == "let" and args:
        return (
            "let evaluates its operands as arithmetic, and the value of each variable "
            "they name in turn (which the line may have filled in)"
        )
    if (why := _named(name, args) or compound(name, args)) is not None:
        return why
    flags = split_args(args, "").flags
    if name == "hash" and "p" in flags:
        return "hash -p makes a name run another program"
    if name == "fc":
        return "fc runs an editor command and then the commands of the shell's history"
    if name == "history" and set(flags) & set(_HISTORY_FILE):
        return "history -a, -n, -r and -w read or write a file (the one named, or HISTFILE)"
    if name == "bind" and "f" in split_args(args, _VALUED_BIND).flags:
        return "bind -f reads a file of key bindings"
    if name == "alias" and any("=" in w.text for w in args):
        return "alias changes what a command name runs (sh and bash --posix expand it)"
    if name == "enable" and (set(flags) - set("aps") or split_args(args, "f").operands):
        return "enable loads or hides builtins"
    if name == "shopt" and "s" in flags and any(w.text == "expand_aliases" for w in args):
        return "shopt -s expand_aliases makes aliases run other words"
    if name in _DECLARING - {"export"} and "n" in flags and _untargeted(args):
        return (
            f"{name} -n without a value makes a nameref whose target a later assignment "
            "sets, and what is then assigned through it is not followed"
        )
    if name in _DECLARING - {"export", "readonly"} and "i" in flags:
        return f"{name} -i makes bash evaluate what is later assigned as arithmetic"
    if name == "compgen" and split_args(args, _VALUED_COMPGEN).valued("F"):
        return "compgen -F runs a shell function"
    return None


def assigned(words: tuple[Word, ...]) -> str | None:
    """Why one of the assignments ``words`` (``x='a[$(CMD)]'``, ``a['$(CMD)']=1``,
    ``BASH_ENV=/dev/stdin``, ``RANDOM=x``) may run code, or None: bash evaluates the
    subscript, or the value where it is later used as a number (at once for ``RANDOM``
    and the like), or a hook variable runs it."""
    if hooks := [name for word in words if (name := _hooked(word)) is not None]:
        return _hooked_why(hooks)
    for word in words:
        if _evaluates(word):
            return _EVALUATES
        if _ASSIGNMENT.match(word.text) and _runs(word.text):
            return (
                f"{word.raw!r} assigns an array subscript holding a command substitution, "
                "which bash runs when it evaluates it as arithmetic"
            )
    return None


def leading(words: tuple[Word, ...]) -> tuple[Word, ...]:
    """The assignments ``words`` starts with (``a[i]=1`` too)."""
    end = 0
    while end < len(words) and _ASSIGNMENT.match(words[end].text):
        end += 1
    return words[:end]


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
    found = split_args(args, _VALUED["mapfile"])
    return found.valued("C")[:1] if "C" in found.flags else None  # -C with no value: ()


def completions(args: tuple[Word, ...]) -> tuple[tuple[Word, ...], tuple[Word, ...]]:
    """What ``compgen ARGS`` runs: its ``-C`` commands, and its ``-W`` word lists (which
    it expands as the shell would, command substitutions included)."""
    found = split_args(args, _VALUED_COMPGEN)
    return found.valued("C"), found.valued("W")


def _named(name: str, args: tuple[Word, ...]) -> str | None:
    """Why a word ``name ARGS`` takes as a variable name may run code, or None."""
    names, values, targets = _names(name, args)
    for word in names:
        if _runs(word.text):
            return _RUNS
        if _indirect(word.text):
            return _INDIRECT
    for word in targets:  # read PS4, printf -v 'BASH_CMDS[ls]', declare -n r=BASH_CMDS
        if _HOOK.fullmatch(name := _variable(word.text)):
            return _hooked_why([name])
        if _variable(word.text) in _EVALUATING:  # read RANDOM, declare -n r=OPTIND
            return _EVALUATES
    for word in values:  # declare NAME=VALUE: the value, where it is later evaluated
        if _runs(word.text):
            return _RUNS
        if (hook := _hooked(word)) is not None:
            return _hooked_why([hook])
        if _evaluates(word):
            return _EVALUATES
    return None


def set_names(words: tuple[Word, ...]) -> tuple[str, ...] | None:
    """The variables the builtin ``words[0]`` may set with its arguments (``read HOME``,
    ``printf -v HOME``, ``unset HOME``; a nameref's target too: ``declare -n r=HOME``),
    or None when one is only known when the shell runs (``read "$v"``)."""
    name = os.path.basename(words[0].text)
    if name in ("test", "["):
        return ()
    names, _, targets = _names(name, words[1:])
    if any(word.dynamic for word in (*names, *targets)):
        return None
    return tuple(_variable(word.text) for word in (*names, *targets))


def _names(name: str, args: tuple[Word, ...]) -> tuple[list[Word], list[Word], list[Word]]:
    """The words ``name ARGS`` takes as variable names, the assignments it makes, and
    the variables it sets (or makes a nameref to)."""
    if name in ("test", "["):
        names = [w for i, w in enumerate(args) if i and args[i - 1].text in ("-v", "-R")]
        return names, [], []
    if name == "unset":
        return list(split_args(args, "").operands), [], []
    if name in _DECLARING:
        return _declared(name, args)
    if name == "printf":
        names = list(split_args(args, "v").valued("v"))
    elif name == "wait":
        names = list(split_args(args, "p").valued("p"))
    elif name == "getopts":
        names = list(args[1:2])
    elif name in _VALUED:
        found = split_args(args, _VALUED[name])
        names = [*found.valued("a"), *found.operands]
    else:
        return [], [], []
    return names, [], names


def _declared(name: str, args: tuple[Word, ...]) -> tuple[list[Word], list[Word], list[Word]]:
    """``declare NAME=VALUE ...``: see ``_names``."""
    found = split_args(args, "")
    names: list[Word] = []
    values: list[Word] = []
    targets: list[Word] = []
    for word in found.operands:
        if (assignment := _ASSIGNMENT.match(word.text)) is None:
            names.append(word)  # declare -x PS4: exports what it holds, sets nothing
            if "=" in word.text:
                values.append(word)  # 'BASH_FUNC_ls%%=...': refused by bash, not by all
            continue
        values.append(word)
        named = word.text[: assignment.end()]
        # only the shell knows the name: expanded, braced or globbed (quotes are taken
        # off: export "CFLAGS=-O2 -g" sets CFLAGS; a value "$x" is no name)
        unknown = any(c in word.raw.partition("=")[0] for c in "$`{}*?")
        # declare -i x=$v evaluates the value as arithmetic, which may set any variable
        evaluated = "i" in found.flags and word.dynamic
        names.append(Word(named, word.raw, dynamic=unknown or evaluated))
        if "n" in found.flags and name != "export":  # a nameref: its value is a name
            targets.append(Word(word.text[assignment.end() :], word.raw, dynamic=word.dynamic))
    return names, values, targets


def _untargeted(args: tuple[Word, ...]) -> bool:
    """A name operand with no value (``declare -n r``): a later ``r=RANDOM`` sets the
    nameref's target."""
    return any(_ASSIGNMENT.match(w.text) is None for w in split_args(args, "").operands)


def _runs(text: str) -> bool:
    """A ``[`` and after it ``$(`` or a backtick: a subscript bash would run code in."""
    start = text.find("[")
    return start >= 0 and (text.find("$(", start) >= 0 or text.find("`", start) >= 0)


def _indirect(text: str) -> bool:
    """A subscript naming a variable (``a[x]``, ``a[$i]``), whose value bash evaluates."""
    start = text.find("[")
    return start >= 0 and any(c.isalpha() or c in "_$" for c in text[start + 1 :])


def _variable(text: str) -> str:
    """The variable a name operand (``a[i]``, ``x=1``) names."""
    found = _NAME.match(text)
    return found.group() if found else text


def _hooked(word: Word) -> str | None:
    """The hook variable an assignment sets that may run code or move ``cd`` (None:
    none): any to ``BASH_CMDS``, ``BASH_ALIASES``, ``BASH_FUNC_*`` or ``CDPATH``, a
    file for ``BASH_ENV`` or ``ENV`` to source, a ``PS4`` holding a substitution."""
    if word.text.startswith("BASH_FUNC_") and "=" in word.text:
        return word.text.split("=", 1)[0]  # BASH_FUNC_ls%%=() { ...; }: no name bash assigns
    found = _ASSIGNMENT.match(word.text)
    if found is None or not _HOOK.fullmatch(name := found.group(1)):
        return None
    value = word.text[found.end() :]
    if name in ("BASH_ENV", "ENV"):
        hooked = bool(value) and (name == "BASH_ENV" or _file_like(word, value))
    elif name == "PS4":
        hooked = word.dynamic or any(part in _PLAIN.sub("", value) for part in _EXPANDS)
    else:
        hooked = True
    return name if hooked else None


def _hooked_why(names: list[str]) -> str:
    """Why setting the hook variables ``names`` may run code or move ``cd``, naming
    only those."""
    names = list(dict.fromkeys(names))
    if len(names) == 1:
        return f"it sets {names[0]}, which {_HOOKS.get(names[0], _EXPORTED)}"
    what = [f"{n} {_HOOKS.get(n, _EXPORTED)}" for n in names]
    return f"it sets {' and '.join(names)}: " + "; ".join(what)


def _evaluates(word: Word) -> bool:
    """An assignment to a variable that evaluates its value at once (``RANDOM=x``,
    ``OPTIND+=1``) of anything but a plain decimal number."""
    found = _ASSIGNMENT.match(word.text)
    if found is None or found.group(1) not in _EVALUATING:
        return False
    return word.dynamic or not _DECIMAL.fullmatch(word.text[found.end() :])


def _file_like(word: Word, value: str) -> bool:
    """An ``ENV`` value that may name the shell's input: not a plain name (``ENV=prod``,
    common for a program's own setting, names a file in the directory)."""
    return word.dynamic or not _PLAIN_NAME.fullmatch(value) or value == "-"
