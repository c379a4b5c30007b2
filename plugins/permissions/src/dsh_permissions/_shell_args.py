"""A shell's arguments read the way the shell reads them (bash 5.2's ``shell.c``, dash,
zsh, ksh, fish): the ``-c`` script it runs, the script file it reads, its startup files,
or that it reads the commands it runs from its input.

Options come before the first operand: a word starting with ``-`` or ``+`` (both set
options, ``bash +c`` runs its script as ``bash -c`` does), ``-`` and ``--`` end them.
``-o NAME`` / ``-O NAME`` (``+o``, ``+O``, also in a cluster: ``-euxo pipefail``) take
the next word, bash's ``--rcfile FILE`` / ``--init-file FILE`` too (also spelt with one
``-`` before any short option, as bash allows). ``c`` among the letters: the first
operand is the script; ``s``: the shell reads its input; neither: the first operand is
a script file, and with none the shell reads its input. A word only known when the
shell runs may be any option: a ``-c`` after it still gives the script.

What is not known is said (``ShellArgs.why``) and the caller asks about the call: a long
option the shell does not have or spelt with ``=``, a letter other than an ASCII letter
or digit, an ``o``/``O`` inside a cluster (zsh reads the rest of the word as its value,
bash the next word), an option value after ``-c`` that is no option's name (``bash -c
-o 'rm x'``), ``-rcfile`` given to ``sh`` (bash's long option, dash's cluster) and
fish's options other than its flags and value letters (``--init-command``). fish's, csh's
and tcsh's ``-c`` (and fish's ``-C``) take the next word as the script and options go on
after it (fish runs each, tcsh the last ``-c``): every one is a script.
su, script, busybox and toybox, which give ``-c`` to a shell, are read as before: the first word
holding ``-c``, wherever it stands.

The ``-c`` script is opened from here (``_commands``), and so are the files a read rule
sees the shell read (``_reads``) and the script a rule for it sees run
(``_readings.script_runs``): all three read the arguments alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from dsh_permissions._shell_words import Word

__all__ = ["SCRIPT_SHELLS", "ShellArgs", "shell_args"]

#: the shells: given a script file (no ``-c``) they read it (``sh -v .env`` prints it)
SCRIPT_SHELLS: Final = frozenset(
    {"ash", "bash", "csh", "dash", "fish", "ksh", "lksh", "mksh", "oksh", "posh", "rbash"}
    | {"sh", "tcsh", "yash", "zsh"}
)
#: bash's long options that take no value / take the next word (a startup file)
_BASH_FLAGS: Final = frozenset(
    {
        *("debug", "debugger", "dump-po-strings", "dump-strings", "help", "login"),
        *("noediting", "noprofile", "norc", "posix", "pretty-print", "protected"),
        *("restricted", "verbose", "version", "wordexp"),
    }
)
_BASH_VALUES: Final = frozenset({"rcfile", "init-file"})
#: the shells that are bash, and ``sh``, which may be bash or dash
_BASH: Final = frozenset({"bash", "rbash"})
#: per shell, the letters that take the next word (the rest: flags)
_VALUES: Final = {
    "zsh": "o", "ksh": "oR", "mksh": "oT", "lksh": "oT", "fish": "dfopcC", "csh": "c",
    "tcsh": "c",
}  # fmt: skip
_DEFAULT_VALUES: Final = "oO"
#: per shell whose ``-c`` takes the next word (options go on after it), the letters
#: whose value is a script it runs: fish runs each ``-c`` and ``-C`` (its init command,
#: before its input or script file), tcsh and csh the last ``-c``: each is checked
_SCRIPT_VALUES: Final = {"fish": "cC", "csh": "c", "tcsh": "c"}
_FISH_FLAGS: Final = frozenset("hilnNPv")
_LETTER: Final = re.compile(r"[A-Za-z0-9]")
_OPTION_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
#: what su, script, busybox and toybox take for ``-c`` / ``-s`` (``_wrapper_grammar`` agrees)
_SHORT_C: Final = re.compile(r"-[A-Za-z]*c[A-Za-z]*")
_SHORT_S: Final = re.compile(r"-[A-Za-z]*s[A-Za-z]*")
_ZSH_LONG: Final = re.compile(r"--[A-Za-z_][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class ShellArgs:
    #: ``c`` was given: the first operand is the script (none: the shell only fails)
    command: bool = False
    #: ``s`` was given: the shell reads its input, its operands are its arguments
    stdin: bool = False
    #: with ``command``: the script (its first operand; fish's and csh's: each ``-c``
    #: value); else the script files
    files: tuple[Word, ...] = ()
    #: the files given to ``--rcfile`` / ``--init-file``
    startup: tuple[Word, ...] = ()
    #: the scripts fish runs first (``-C``/``--init-command``), without ``command``
    inits: tuple[Word, ...] = ()
    #: why the arguments are not known (asked about), or None
    why: str | None = None


def shell_args(name: str, args: tuple[Word, ...]) -> ShellArgs:
    """How the shell ``name`` reads ``args`` (see the module)."""
    if name not in SCRIPT_SHELLS:
        return _anywhere(args)
    command = stdin = short_seen = False
    startup: list[Word] = []
    scripts: dict[str, list[Word]] = {"c": [], "C": []}
    values = _VALUES.get(name, _DEFAULT_VALUES)
    i = 0
    while i < len(args):
        text = args[i].text
        if args[i].dynamic and (later := _anywhere(args[i + 1 :])).command:
            if name in _SCRIPT_VALUES:  # fish $opts -c true -c '...': one of many
                return ShellArgs(why=f"{name} is given a word only known when it runs")
            return ShellArgs(command=True, files=later.files)  # bash $opts -c '...'
        if args[i].dynamic or text in ("-", "--") or not text.startswith(("-", "+")):
            if text in ("-", "--"):
                i += 1
            break
        long_name = text[2:] if text.startswith("--") else text[1:]
        single = not text.startswith("--")
        if not single or (text.startswith("-") and not short_seen and long_name in _BASH_VALUES):
            if single and name not in _BASH:
                return _unknown(name, text)
            why = _long(name, text, long_name)
            if why is not None:
                return ShellArgs(why=why)
            if long_name in _BASH_VALUES:
                if i + 1 >= len(args):
                    return ShellArgs(why=f"{name} {text} is given no file")
                startup.append(args[i + 1])
                i += 1
            i += 1
            continue
        if text[0] == "-" and not short_seen and long_name in _BASH_FLAGS and name in _BASH:
            i += 1  # bash -login: a long option spelt with one -
            continue
        short_seen = True
        taken = 0
        for at, letter in enumerate(text[1:], start=1):
            if not _LETTER.fullmatch(letter):
                return _unknown(name, text)
            if name == "fish" and letter not in _FISH_FLAGS and letter not in values:
                return _unknown(name, text)
            if letter in values:
                if at != len(text) - 1:
                    return ShellArgs(why=f"{name} {text}: a value inside a cluster is not read")
                taken += 1
            command |= letter == "c"
            stdin |= letter == "s"
        value_words = args[i + 1 : i + 1 + taken]
        if len(value_words) < taken:
            return ShellArgs(why=f"{name} {text} is given no value")
        if taken and text[-1] in _SCRIPT_VALUES.get(name, ""):
            scripts[text[-1]].extend(value_words)
            i += 1 + taken
            continue
        # fish's values are files and categories
        named = all(not w.dynamic and _OPTION_NAME.fullmatch(w.text) for w in value_words)
        if not named and name != "fish":
            return ShellArgs(why=f"{name} {text} is given a value that is no option's name")
        i += 1 + taken
    if scripts["c"]:
        return ShellArgs(True, stdin, tuple(scripts["c"]), tuple(startup), tuple(scripts["C"]))
    files = args[i : i + 1] if command or not stdin else ()
    return ShellArgs(command, stdin, files, tuple(startup), tuple(scripts["C"]))


def _anywhere(args: tuple[Word, ...]) -> ShellArgs:
    """su, script, busybox and toybox: the first word holding ``-c`` (wherever it stands) and
    the next word not starting with ``-`` is the script; ``-s`` or no operand: the
    input; else every operand may be the script file."""
    for position, word in enumerate(args):
        if _SHORT_C.fullmatch(word.text):
            rest = tuple(w for w in args[position + 1 :] if not w.text.startswith("-"))
            return ShellArgs(command=True, files=rest[:1])
    options = [w.text for w in args if w.text.startswith("-")]
    stdin = len(options) == len(args) or any(_SHORT_S.fullmatch(o) for o in options)
    files = () if stdin else tuple(w for w in args if not w.text.startswith("-"))
    return ShellArgs(stdin=stdin, files=files)


def _long(name: str, text: str, long_name: str) -> str | None:
    """Why the long option ``text`` of ``name`` is not known, or None."""
    if name == "zsh" and _ZSH_LONG.fullmatch(text):
        return None  # zsh --emacs: an option's name, no value
    if name in (*_BASH, "sh") and (long_name in _BASH_FLAGS or long_name in _BASH_VALUES):
        return None
    return _unknown(name, text).why


def _unknown(name: str, text: str) -> ShellArgs:
    return ShellArgs(why=f"the option {text!r} of {name} is not known")
