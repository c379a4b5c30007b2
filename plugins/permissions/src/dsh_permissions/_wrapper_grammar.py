"""When a wrapper's own syntax hides what it runs (``_wrappers`` guesses where the
command behind any wrapper starts; this module says when that is not enough).

Such a command is taken as a value only known when it runs (asked about when a deny
or ask rule has a pattern, denied in ``bypass`` mode), the outcome of syntax the
checker does not model:

- a command string given to an option (``su -c``, ``runuser -c``, ``flock -c``,
  ``script -c``). ``su`` and ``script`` are read as shells, whose ``-c STRING`` is
  opened as ``sh -c``'s is; any other spelling of it (``--command``, ``-c'...'``, two
  of them) and flock's and runuser's (which run commands behind them too) are not
  opened;
- a wrapper given no command that then runs a shell, which reads the commands it
  runs from its input (``echo 'rm x' | unshare``, ``chroot /``, ``sudo -s``,
  ``su root``, ``machinectl shell [HOST]``), and su's arguments after the user, which
  go to that shell;
- options that make su's shell another program or run it elsewhere (``-s``, ``-l``,
  ``-``);
- programs whose grammar is too open to model (``bwrap``, ``firejail``, ``proot``,
  ``sg``, ``newgrp``, ``capsh``, ``gdb``, ``lldb``), and openers, which run what a
  desktop or mailcap setting names (``xdg-open``, ``gio``, ``run-mailcap``).

Which options take a value is each tool's own (their ``--help``, util-linux 2.39,
sudo 1.9); an unknown long option taking one can only make a command look bare, which
is stricter.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Final

from dsh_permissions._command_options import hidden
from dsh_permissions._getopt import END, long_in, long_option, scan, short_cluster
from dsh_permissions._wrappers import (
    VERBS,
    WRAPPER_ARG,
    WRAPPERS,
    behind,
    skip_assignments,
)

__all__ = ["UNMODELLED", "command_at", "may_run", "split_string", "unmodelled"]

#: too open to model: every use is taken as only known when it runs
UNMODELLED: Final = frozenset(
    {
        *("bwrap", "firejail", "proot", "sg", "newgrp", "capsh", "gdb", "lldb", "expect"),
        # they run a string through a shell, commands read from their input, or later
        *("tmux", "screen", "nix-shell", "watchexec", "entr", "pee", "mispipe", "at"),
        "batch",
        # autossh gives its words to ssh, with options of its own (-M PORT); niceload
        # (GNU parallel's) runs its command with options of its own
        *("autossh", "niceload"),
        # the variables the files of their directory hold (PATH=, LD_PRELOAD=)
        *("envdir", "s6-envdir"),
        # they open a file or URL with the program a desktop or mailcap setting names
        # (a .desktop file's Exec line, BROWSER, ~/.mailcap); gio also reads (gio cat)
        *("xdg-open", "gio", "gvfs-open", "gnome-open", "kde-open", "kde-open5"),
        *("kioclient", "kioclient5", "exo-open", "gtk-launch", "dex", "run-mailcap"),
        *("see", "edit", "compose", "print", "open", "openvt"),
        # shells whose command strings are not read as sh's (their -c runs them)
        *("pwsh", "powershell", "nu", "elvish", "xonsh", "rc", "es", "osh", "ysh", "oil"),
        *("ion", "murex"),
    }
)


@dataclass(frozen=True)
class _Grammar:
    #: short and long options that take a value (the next word unless attached)
    values: str = ""
    long_values: tuple[str, ...] = ()
    #: operands before the command (chroot's NEWROOT, flock's FILE, su's USER)
    operands: int = 0
    #: given no command it runs a shell; ``shell_when``: only with one of these letters
    #: or long options (``sudo -s``); empty: always
    shell: bool = False
    shell_when: str = ""
    shell_long: tuple[str, ...] = ()
    #: an option whose value is a command string (``-c``, ``--command``)
    strings: bool = False
    #: options that make what runs something else or elsewhere (su -s SHELL, -l)
    refused: str = ""
    refused_long: tuple[str, ...] = ()
    #: read as a shell (``_readings.SHELLS``): its ``-c STRING`` is opened
    opened: bool = False
    #: a word after the operands is a command (script's is one more file)
    runs: bool = True
    #: the letters that take no value: given with ``values``, every short option of
    #: the tool, so ``may_run`` reads where its command stands (empty: not known)
    flags: str = ""
    #: words holding ``=`` before the command are assignments (``env X=1 cmd``)
    assignments: bool = False
    #: the grammar holds only after this verb, its first operand (``machinectl shell``)
    verb: str = ""


#: what ``_commands`` opens as a shell's ``-c``: the first word matching it
_SHORT_C: Final = re.compile(r"-[A-Za-z]*c[A-Za-z]*")
_STRING_LONG: Final = ("--command", "--session-command")
_SU_VALUES: Final = ("--whitelist-environment", "--group", "--supp-group", "--shell")
_SU: Final = _Grammar(
    values="wgGsc",
    long_values=_SU_VALUES,
    operands=1,
    shell=True,
    strings=True,
    refused="sl",
    refused_long=("--shell", "--login"),
    opened=True,
)
_CHROOT: Final = _Grammar(long_values=("--userspec", "--groups"), operands=1, shell=True)
_GRAMMARS: Final = {
    "su": _SU,
    # runuser -u USER [--] COMMAND; without -u it is su
    "runuser": _Grammar(
        values="uwgGsc",
        long_values=("--user", *_SU_VALUES),
        shell=True,
        strings=True,
        refused="sl",
        refused_long=("--shell", "--login"),
    ),
    "script": _Grammar(
        values="IOBTmEoc",
        long_values=("--log-in", "--log-out", "--log-io", "--log-timing"),
        operands=1,
        shell=True,
        strings=True,
        opened=True,
        runs=False,
    ),
    "flock": _Grammar(
        values="wEc", long_values=("--timeout", "--conflict-exit-code"), operands=1, strings=True
    ),
    "chroot": _CHROOT,
    "gchroot": _CHROOT,
    "unshare": _Grammar(
        values="RwSG",
        long_values=(
            *("--root", "--wd", "--setuid", "--setgid", "--propagation", "--setgroups"),
            *("--monotonic", "--boottime", "--map-user", "--map-group", "--map-users"),
            "--map-groups",
        ),
        shell=True,
    ),
    "nsenter": _Grammar(
        values="tSGW", long_values=("--target", "--setuid", "--setgid", "--wdns"), shell=True
    ),
    "fakeroot": _Grammar(values="lisb", long_values=("--lib", "--faked"), shell=True),
    "pkexec": _Grammar(long_values=("--user",), shell=True),
    "run0": _Grammar(
        values="ugD",
        long_values=(
            *("--user", "--group", "--chdir", "--nice", "--setenv", "--property", "--unit"),
            *("--description", "--slice", "--machine", "--background"),
        ),
        shell=True,
    ),
    # sudo 1.9's getopt string "+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv"
    "sudo": _Grammar(
        values="aCcDghpRrtTUu",
        flags="ABbEeHiKklNnPSsVv",
        long_values=(
            *("--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot"),
            *("--role", "--type", "--command-timeout", "--other-user", "--user"),
        ),
        shell=True,
        shell_when="si",
        shell_long=("--shell", "--login"),
    ),
    "doas": _Grammar(values="auC", flags="Lns", shell=True, shell_when="s"),
    # coreutils 9 and BSD env; -S (its string is split by _commands) is not listed
    "env": _Grammar(
        values="CLPUu", long_values=("--unset", "--chdir"), flags="0iv", assignments=True
    ),
    "systemd-run": _Grammar(refused="S", refused_long=("--shell",)),
    # systemd 255: machinectl [OPTIONS] shell [OPTIONS] [[USER@]HOST [PROGRAM ARGS]]
    "machinectl": _Grammar(
        values="psHMnoE",
        long_values=(
            *("--property", "--kill-whom", "--signal", "--host", "--machine", "--lines"),
            *("--output", "--runner", "--uid", "--setenv", "--verify", "--format"),
            "--max-addresses",
        ),
        operands=2,
        shell=True,
        verb=VERBS["machinectl"],
    ),
}
_SHELL_WHY: Final = "given no command, {name} runs a shell that reads its commands from its input"


def unmodelled(words: list[str]) -> str | None:
    """Why what the command ``words`` runs is not known before it runs, when a wrapper
    at its start or behind a wrapper hides it (see the module), or None."""
    start = skip_assignments(words)
    if start >= len(words):
        return None
    places = [start]
    if os.path.basename(words[start]) in WRAPPERS:
        candidates = behind(words, start)
        places += candidates or []
    for index in places:
        name = os.path.basename(words[index])
        if name in UNMODELLED:
            return f"what {name} runs is not modelled"
        if (why := hidden(words, index)) is not None:  # tar --to-command=...
            return why
        if (grammar := _GRAMMARS.get(name)) is not None:
            why = _hidden(name, grammar, words, index)
            if why is not None:
                return why
    return None


@dataclass
class _Parsed:
    #: each letter given (a list: a string attribute grown by ``+=`` is copied whole
    #: each time, which a long cluster makes quadratic)
    letters: list[str] = field(default_factory=list)
    longs: tuple[str, ...] = ()
    #: the index of each word that gives a command string
    strings: tuple[int, ...] = ()
    #: a command string given the plain way: ``-c`` (or a cluster ending in it) and
    #: the next word, which does not start with ``-``
    plain: tuple[int, ...] = ()
    operands: tuple[int, ...] = ()
    command: int | None = None

    def given(self, longs: tuple[str, ...]) -> bool:
        """Whether one of the long options ``longs`` is given (getopt abbreviations too)."""
        return any(long_in(name, longs) for name in self.longs)


def may_run(words: list[str], index: int) -> list[int] | None:
    """The indexes of the words that may be the command the wrapper at ``index`` runs.
    Read by its grammar when every option given it is known (``sudo -E apt install
    zsh``: ``apt``; none when it is given no command); else ``_wrappers.behind``'s guess,
    where a word after any option may be its value."""
    grammar = _GRAMMARS.get(os.path.basename(words[index]))
    if grammar is None or not grammar.flags:
        return behind(words, index)
    parsed = _parse(grammar, words, index)
    known = set(grammar.values) | set(grammar.flags)
    longs = all(long_in(f, grammar.long_values) for f in parsed.longs)
    bare = parsed.command is not None and words[parsed.command] == "-"  # env -: env -i
    if not set(parsed.letters) <= known or not longs or bare:
        return behind(words, index)
    return [] if parsed.command is None else [parsed.command]


def command_at(words: list[str], index: int) -> int:
    """Where the command the wrapper at ``index`` runs starts, for its own text: the
    first word after it that is no option, assignment or number (``nice -n 5 rm x``:
    ``rm x``); after ``machinectl shell [USER@]HOST`` by its grammar (the end when it
    runs none: ``machinectl list``)."""
    grammar = _GRAMMARS.get(os.path.basename(words[index]))
    if grammar is not None and grammar.verb:
        parsed = _parse(grammar, words, index)
        if _other_verb(grammar, words, parsed) or parsed.command is None:
            return len(words)
        return parsed.command
    inner = index + 1
    while inner < len(words) and WRAPPER_ARG.fullmatch(words[inner]):
        inner += 1
    return inner


def _other_verb(grammar: _Grammar, words: list[str], parsed: _Parsed) -> bool:
    """Given another verb than the grammar's, or none (``machinectl list``, a bare
    ``machinectl``: it runs nothing)."""
    return bool(grammar.verb) and (not parsed.operands or words[parsed.operands[0]] != grammar.verb)


def _hidden(name: str, grammar: _Grammar, words: list[str], index: int) -> str | None:
    parsed = _parse(grammar, words, index)
    if _other_verb(grammar, words, parsed):
        return None
    if parsed.strings:
        if not grammar.opened:
            return f"the command string {name} runs is not opened"
        if parsed.strings != parsed.plain or len(parsed.plain) != 1 or parsed.command is not None:
            return f"the command string {name} runs is given in a way that is not opened"
        if not _first_c(words[index + 1 :], parsed.plain[0] - index - 1):
            return f"the command string {name} runs is given in a way that is not opened"
    refused = set(parsed.letters) & set(grammar.refused) or parsed.given(grammar.refused_long)
    if refused or (name in ("su", "runuser") and "-" in _operand_texts(words, parsed)):
        return f"{name} runs another shell, or in another directory"
    if name == "runuser" and "u" not in parsed.letters and "--user" not in parsed.longs:
        return "runuser without -u runs a shell (given its arguments, or reading its input)"
    if name == "su" and parsed.command is not None:
        return "su gives its arguments after the user to a shell"
    if grammar.shell and parsed.command is None and not parsed.strings:
        when = grammar.shell_when
        if not when and not grammar.shell_long:
            return _SHELL_WHY.format(name=name)
        if set(parsed.letters) & set(when) or parsed.given(grammar.shell_long):
            return _SHELL_WHY.format(name=name)
    return None


def _operand_texts(words: list[str], parsed: _Parsed) -> list[str]:
    return [words[i] for i in parsed.operands]


def _first_c(args: list[str], at: int) -> bool:
    """Whether the word at ``at`` is the first one a shell's ``-c`` is looked for at
    (``_commands``: the first word that is ``-c`` or a cluster holding ``c``)."""
    return next((p for p, w in enumerate(args) if _SHORT_C.fullmatch(w)), None) == at


def _parse(grammar: _Grammar, words: list[str], index: int) -> _Parsed:
    """Read the options as getopt does (stopping at the command, after the operands)."""
    parsed = _Parsed()
    strings = _STRING_LONG if grammar.strings else ()
    valued = grammar.values + ("c" if grammar.strings else "")
    for read in scan(words, index + 1, valued, (*strings, *grammar.long_values)):
        if read.option == END:
            continue
        if read.option.startswith("--"):
            parsed.longs += (read.option,)
            if long_in(read.option, strings):
                parsed.strings += (read.at,)
        elif read.option:
            parsed.letters.append(read.option[1])
            if read.option == "-c" and grammar.strings:
                parsed.strings += (read.at,)
                if read.value is not None and read.last > read.at and read.value[:1] != "-":
                    parsed.plain += (read.at,)
        elif not (grammar.assignments and "=" in words[read.at]):  # env NAME=VALUE
            parsed.operands += (read.at,)
            if len(parsed.operands) > grammar.operands and grammar.runs:
                parsed.command = read.at
                return parsed
    return parsed


def split_string(words: list[str], index: int) -> tuple[int, int, str] | None:
    """For ``env`` at ``index`` given ``-S STRING`` (``-SSTRING``, ``-iS STRING``,
    ``--split-string=STRING``, ``--split STRING``): ``(i, j, STRING)``, where
    ``words[i:j]`` are the option and its value, which env splits into words and
    runs (``env -S 'cat .env'`` runs ``cat .env``). None: no such option. Options are
    read as getopt reads them (an ``S`` in another option's value is none: ``-uS -S
    STRING`` unsets ``S``, ``-u -S -S STRING`` unsets ``-S``), up to the first word
    that is neither one, an assignment nor a number; ``--`` is read past (stricter)."""
    env = _GRAMMARS["env"]
    i = index + 1
    while i < len(words) and WRAPPER_ARG.fullmatch(words[i]):
        word = words[i]
        if word.startswith("--") and long_option(word, "--split-string"):
            if "=" in word:
                return i, i + 1, word.split("=", 1)[1]
            return (i, i + 2, words[i + 1]) if i + 1 < len(words) else None
        if word.startswith("--"):
            i += 2 if "=" not in word and long_in(word, env.long_values) else 1
        elif word.startswith("-") and word != "-":
            cluster = short_cluster(words, i, None, env.values + "S")
            if cluster is None:
                return None  # a value is missing: env runs nothing
            last, options = cluster
            if options and options[-1][0] == "S":
                return i, last + 1, options[-1][1]
            i = last + 1
        else:
            i += 1
    return None
