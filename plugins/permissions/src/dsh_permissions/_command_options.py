"""Options of programs the plugin models that make them run a command it does not look
into: tar's ``--to-command``, ``-I``, ``-F``, ``--rsh-command``,
``--checkpoint-action``; ``split --filter``; ``rsync -e``/``--rsync-path``; ``zip
-T``/``-TT``; ``scp``'s and ``sftp``'s ``-S``/``-o``/``-F`` (``sftp -b``/``-D`` too);
``rg --pre``; ``fd -x`` / ``-X``; ``strace -o '|CMD'``; ``bat``'s, ``ag``'s and
``ack``'s ``--pager``; ``diff3`` and ``sdiff --diff-program``; ``install
--strip-program``; ``man -P``, ``-H``, ``-C``; ``systemd-run -p``/``-E`` (``run0
--property``/``--setenv``); ``srun --prolog`` and the like; ``chpst -e``;
``pygmentize -x``; ``ssh -F``, ``-I``
and ``-o`` with a setting not known to run nothing (``ProxyCommand``, ``LocalCommand``,
``Match exec``, ...; ``-o BatchMode=yes`` runs none); ``sort --compress-program``;
``cpio --rsh-command``; ``wget --use-askpass``, ``--config`` and ``-e`` (but for a few
commands known to run nothing: ``-e robots=off``); an editor's commands (``vim -c``,
``+CMD``, ``--cmd``, ``-S``, ``-s``, ex mode, ``nvim -l``; ``emacs --eval``;
``emacsclient -e``/``-a``; ``ed`` and ``ex``, which take their commands from their
input); git's ``-c`` with a setting that may run one, ``--exec-path``, ``git config``
storing such a setting and a subcommand's option that runs one (``rebase -x``, ``bisect
run``, ``clone -c``: ``_git.runs_command``); and the environment variables that do the
same (``TAR_OPTIONS``; set in the line: ``RSYNC_RSH``, ``GIT_CONFIG_PARAMETERS``,
``GIT_SSH_COMMAND``, ``LESSOPEN``, ``VIMINIT``, ``EXINIT``, ``MYVIMRC``, ``WGETRC``, GNU
parallel's ``PARALLEL``, ``PARALLEL_SHELL``, ``PARALLEL_SSH``, ``PARALLEL_HOME`` and the
like, ``SSH_ASKPASS`` and ``SSH_ASKPASS_REQUIRE`` for ssh and what runs it (scp, sftp,
rsync, git, parallel), ``SUDO_ASKPASS`` for sudo, ``SUDO_EDITOR``, ``VISUAL`` and
``EDITOR`` for ``sudo -e`` and sudoedit, ``LD_PRELOAD``, ``PERL5OPT`` and the like
(``LOADER_VARIABLES``) for every program, and ``HOME`` for git, gpg, vim, emacs, wget
and parallel, which read their settings there, ...; not for ssh, which reads ``~`` from
the password database).

Such a command is one whose effects are not known before it runs (``hidden``,
through ``_wrapper_grammar.unmodelled``): asked about, never allowed by a pattern, and
denied in bypass mode where a deny rule of the tool (or a ``read`` one) could match.
Long options are matched as getopt does, abbreviated too (``--to-com=``); short ones
in a cluster up to the first letter taking a value (``-xIcmd``), and in tar's old
style first word (``xIf``) every letter, the next words being the values of those that
take one (``tar xf -f --to-command=CMD``: the archive ``-f``). A tar line with a
letter GNU tar and bsdtar read differently (``-L``, ``-H``, ``-s``, ``-W``:
``_tar.disputed``) is one too: bsdtar's ``-W use-compress-program=CMD`` runs CMD, and
``-L --use-compress-program=CMD`` gives ``-L`` its value in GNU tar, none in bsdtar.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Final

from dsh_permissions._getopt import END, long_in, scan
from dsh_permissions._git import runs_command
from dsh_permissions._option_variables import (
    GIT_LINE_VARIABLES,
    GPG_VARIABLES,
    LESS_VARIABLES,
    LOADER_VARIABLES,
    PARALLEL_VARIABLES,
    RSYNC_VARIABLES,
    SEARCHER_VARIABLES,
    SSH_VARIABLES,
    SUDO_VARIABLES,
    SUDOEDIT_VARIABLES,
    TAR_VARIABLES,
    VIM_VARIABLES,
    WGET_VARIABLES,
    named,
    set_in_line,
)
from dsh_permissions._tar import TAR_VALUED, TARS, disputed, old_style
from dsh_permissions._wget import without_plain_commands

__all__ = ["SSHS", "hidden"]


@dataclass(frozen=True)
class _Runs:
    """What makes one program run a command."""

    #: short options that do (their value is the command, or a file of commands)
    letters: str = ""
    #: short options that take a value (a cluster ends at one)
    valued: frozenset[str] = frozenset()
    #: long options that do (getopt abbreviations too)
    long: tuple[str, ...] = ()
    #: long options abbreviating one of ``long`` that are others (``--checkpoint``)
    others: tuple[str, ...] = ()
    #: tar's old style: the first word is letters without a dash
    old_style: bool = False
    #: vim's ``+CMD`` (``+N`` goes to a line)
    plus: bool = False
    #: it runs commands from its input whatever its options (ed, ex)
    always: bool = False
    #: environment variables that give it options or a command (inherited ones too)
    variables: tuple[str, ...] = ()
    #: the same, counted only when the line sets them (dsh's own are the person's)
    line_variables: tuple[str, ...] = ()
    #: ssh's ``-J`` (ProxyJump): run through ``$SHELL -c`` unless a plain hop list
    jump: bool = False


_TAR: Final = _Runs(
    letters="IF",
    valued=TAR_VALUED,
    long=(
        *("--to-command", "--use-compress-program", "--info-script", "--new-volume-script"),
        *("--rsh-command", "--checkpoint-action"),
    ),
    others=("--checkpoint",),
    old_style=True,
    variables=TAR_VARIABLES[:1],
)
_VIM: Final = _Runs(
    letters="cSsuUeE",
    valued=frozenset("iTwWt"),
    long=("--cmd", "--remote-expr", "--remote-send"),  # a running vim server does it
    plus=True,
    line_variables=(*VIM_VARIABLES, "HOME"),
)
#: nvim's ``-l`` runs a Lua script; it reads its settings in ``XDG_CONFIG_HOME`` too
_NVIM: Final = replace(
    _VIM, letters=_VIM.letters + "l", line_variables=(*_VIM.line_variables, "XDG_CONFIG_HOME")
)
#: ssh, also under its old name
SSHS: Final = frozenset({"ssh", "slogin"})
_SSH: Final = _Runs(
    letters="FI",
    valued=frozenset("BbcDEeFIiJLlmOoPpQRSWw"),
    line_variables=SSH_VARIABLES,
    jump=True,
)
_RUNS: Final = {
    **dict.fromkeys(TARS, _TAR),
    **dict.fromkeys(("split", "gsplit"), _Runs(long=("--filter",))),
    "rsync": _Runs(
        letters="e",
        valued=frozenset("eBfMT@"),
        long=("--rsh", "--rsync-path"),
        line_variables=(*RSYNC_VARIABLES, *SSH_VARIABLES),
    ),
    "zip": _Runs(letters="T", valued=frozenset("bnOtPZs"), long=("--unzip-command",)),
    "scp": _Runs(
        letters="DFSo", valued=frozenset("cDFiJloPSX"), line_variables=SSH_VARIABLES, jump=True
    ),
    # -b: a batch file's ``!CMD``; -D: a local sftp server
    "sftp": _Runs(
        letters="bDFSo",
        valued=frozenset("BbcDFiJloPRSsX"),
        line_variables=SSH_VARIABLES,
        jump=True,
    ),
    **dict.fromkeys(("sort", "gsort"), _Runs(long=("--compress-program",))),
    "cpio": _Runs(long=("--rsh-command",)),
    "wget": _Runs(
        letters="e",
        valued=frozenset("aABDiIlOoPQRtTUwX"),
        long=("--use-askpass", "--execute", "--config"),
        line_variables=(*WGET_VARIABLES, "HOME"),
    ),
    **dict.fromkeys(("vi", "vim", "view", "gvim", "vimdiff", "rvim"), _VIM),
    "nvim": _NVIM,
    "emacs": _Runs(
        letters="lfsx",
        valued=frozenset("dLtT"),
        long=("--eval", "--load", "--funcall", "--script", "--execute"),
        line_variables=("HOME",),
    ),
    # -e: lisp a running emacs evaluates; -a: an editor run when none is
    "emacsclient": _Runs(
        letters="ea", valued=frozenset("asfFdwT"), long=("--eval", "--alternate-editor")
    ),
    **dict.fromkeys(("ed", "red", "ex"), _Runs(always=True)),
    **dict.fromkeys(
        ("gpg", "gpg2"),
        _Runs(
            long=("--photo-viewer", "--exec-path", "--options", "--homedir"),
            line_variables=(*GPG_VARIABLES, "HOME"),
        ),
    ),
    "less": _Runs(line_variables=LESS_VARIABLES),
    # rg runs --pre COMMAND on each file it searches (its config file may give it);
    # bat, ag and ack run their pager (bat's config, ack's options in a variable)
    "rg": _Runs(long=("--pre",), line_variables=SEARCHER_VARIABLES[:1]),
    **dict.fromkeys(
        ("bat", "batcat"),
        _Runs(
            long=("--pager",),
            line_variables=(*SEARCHER_VARIABLES[1:4], "XDG_CONFIG_HOME", "HOME"),
        ),
    ),
    "ag": _Runs(long=("--pager",)),
    # fd runs its -x / --exec (-X / --exec-batch) command on each file it finds
    **dict.fromkeys(
        ("fd", "fdfind"),
        _Runs(letters="xX", valued=frozenset("dteEcjSoxX"), long=("--exec", "--exec-batch")),
    ),
    # strace -o '|CMD' (or '!CMD') pipes its output to CMD, run by a shell (_piped)
    "strace": _Runs(),
    # the program they compare with, and the one install -s strips with
    **dict.fromkeys(("diff3", "sdiff"), _Runs(long=("--diff-program",))),
    **dict.fromkeys(("install", "ginstall"), _Runs(long=("--strip-program",), others=("--strip",))),
    "ack": _Runs(long=("--pager",), line_variables=(*SEARCHER_VARIABLES[4:], "HOME")),
    # -F: a configuration (ProxyCommand, Match exec); -I: a PKCS#11 library it loads;
    # -o: a setting not known to run nothing (_ssh_option); -J: _jump
    **dict.fromkeys(SSHS, _SSH),
    **dict.fromkeys(("sudo", "sudoedit"), _Runs(line_variables=SUDO_VARIABLES)),
    # its options, shell, ssh command and profiles (its own options: _parallel)
    **dict.fromkeys(
        ("parallel", "sem"),
        _Runs(line_variables=(*PARALLEL_VARIABLES, *SSH_VARIABLES, "HOME", "XDG_CONFIG_HOME")),
    ),
    # man runs its pager (-P) and browser (-H) through a shell; -C: a configuration
    # naming them (man-db 2.12)
    "man": _Runs(
        letters="PHC",
        valued=frozenset("CMSsemLpPrER"),
        long=("--pager", "--html", "--config-file"),
        line_variables=("MANPAGER", "PAGER", "BROWSER", "MANOPT"),
    ),
    # a unit's properties run commands of their own (ExecStartPre=); -E: the command's
    # environment (LD_PRELOAD=)
    "systemd-run": _Runs(
        letters="pE",
        valued=frozenset("upEMHC"),
        long=(
            *("--property", "--setenv", "--path-property", "--socket-property"),
            "--timer-property",
        ),
    ),
    "run0": _Runs(valued=frozenset("ugD"), long=("--property", "--setenv")),
    "srun": _Runs(long=("--prolog", "--epilog", "--task-prolog", "--task-epilog")),
    # -e DIR: the variables its files hold (PATH=, LD_PRELOAD=)
    "chpst": _Runs(letters="e", valued=frozenset("uUbe/nlLmdofcrt")),
    # -x: a lexer, formatter or filter loaded from a Python file (-l lexer.py:L)
    "pygmentize": _Runs(letters="x", valued=frozenset("lfFoOPaS")),
    # HOME: git reads ~/.gitconfig (HOME=. git status)
    "git": _Runs(line_variables=(*GIT_LINE_VARIABLES, *SSH_VARIABLES, "HOME")),
}
#: a plain ProxyJump hop list: ``[ssh://][user@]host[:port]``, comma-separated (ssh runs
#: a hop list through ``$SHELL -c``: any other is a command)
_HOP: Final = r"(?:ssh://)?(?:[A-Za-z0-9_][A-Za-z0-9_.-]*@)?[A-Za-z0-9][A-Za-z0-9_.-]*(?::[0-9]+)?"
_HOPS: Final = rf"{_HOP}(?:,{_HOP})*"
_PLAIN_HOPS: Final = re.compile(_HOPS, re.ASCII)
#: ssh's ``-o`` settings that run nothing, given a plain value (one word, no quoting),
#: and the known-hosts files given ``/dev/null`` (any other is a file ssh reads)
_PLAIN_SSH_SETTING: Final = re.compile(
    r"\s*(?:(?:"
    r"BatchMode|StrictHostKeyChecking|ConnectTimeout|ConnectionAttempts|Port|User|"
    r"ServerAliveInterval|ServerAliveCountMax|TCPKeepAlive|LogLevel|Compression|"
    r"AddressFamily|PasswordAuthentication|PubkeyAuthentication|IdentitiesOnly|"
    r"KbdInteractiveAuthentication|PreferredAuthentications|NumberOfPasswordPrompts|"
    r"GSSAPIAuthentication|ExitOnForwardFailure|ForwardAgent|ForwardX11|RequestTTY|"
    r"CheckHostIP|HashKnownHosts|UpdateHostKeys|VisualHostKey|ControlMaster|"
    r"ControlPersist|ControlPath|ClearAllForwardings|Ciphers|MACs|KexAlgorithms|"
    r"HostKeyAlgorithms|EscapeChar"
    r")(?:\s*=\s*|[ \t]+)[A-Za-z0-9_.,:@/%+~-]*"
    r"|ProxyJump(?:\s*=\s*|[ \t]+)"
    + _HOPS
    + r"|(?:UserKnownHostsFile|GlobalKnownHostsFile)(?:\s*=\s*|[ \t]+)/dev/null)[ \t]*",
    re.IGNORECASE | re.ASCII,
)


def hidden(words: list[str], index: int) -> str | None:
    """Why the program at ``words[index]`` (its assignments and wrappers before it) may
    run a command not looked into, or None."""
    name = os.path.basename(words[index])
    before = words[:index]
    if loaded := [v for v in LOADER_VARIABLES if _set_here(v, before)]:
        return f"{loaded[0]} may make {name} load code that is not looked into"
    runs = _RUNS.get(name)
    if runs is None:
        return None
    found = [v for v in runs.variables if v in os.environ or _set_here(v, before)]
    found += [v for v in runs.line_variables if _set_here(v, before)]
    if name == "sudoedit" or (name == "sudo" and _sudo_edits(words[index + 1 :])):
        found += [v for v in SUDOEDIT_VARIABLES if _set_here(v, before)]
    if found:
        return f"{found[0]} may make {name} run a command that is not looked into"
    if runs.always:
        return f"{name} runs the commands its input gives, which are not looked into"
    args = words[index + 1 :]
    if name in TARS and (letter := disputed(args)) is not None:
        return (
            f"{name} {letter} takes a value in GNU tar or bsdtar but not in the other: "
            "what it reads and runs is not known"
        )
    if name == "wget":
        args = without_plain_commands(args)
    if name == "git":
        option = runs_command(args)
    elif name == "strace":
        option = _piped(args)
    else:
        option = _ssh_option(runs, args) if name in SSHS else _option(runs, args)
    if option is None:
        return None
    return f"{name} {option} runs a command that is not looked into"


#: strace's options taking a value (strace 6)
_STRACE_VALUED: Final = frozenset("abeIoOpPsSuEXU")


def _piped(args: list[str]) -> str | None:
    """strace's ``-o`` / ``--output`` given ``|CMD`` or ``!CMD``: its output is piped to
    CMD, which a shell runs (the words after its command too: stricter)."""
    for read in scan(args, 0, _STRACE_VALUED, ("--output",)):
        if read.option == END:
            return None
        output = read.option == "-o" or (
            read.option.startswith("--") and long_in(read.option, ("--output",))
        )
        if output and (read.value or "")[:1] in ("|", "!"):
            return read.option
    return None


def _set_here(name: str, before: list[str]) -> bool:
    """Whether the line sets the variable ``name``: in the words ``before`` the program
    or naming it earlier (not only by ``source``, which would ask about every git
    command after ``. .venv/bin/activate``; see docs/permissions.md, Limits)."""
    return set_in_line((name,), anything=False) or any(named(name, t) for t in before)


def _option(runs: _Runs, args: list[str]) -> str | None:
    """The option of ``args`` that makes the program run a command, or None (its long
    options are read as taking no value: a word after one is read as an option too).
    tar's old-style first word (``xIf``): each of its letters, and the next words are
    the values of those taking one (``tar xf -f --to-command=CMD``: ``_tar.old_style``)."""
    start = 0
    if runs.old_style and (letters := old_style(args)) is not None:
        if hit := [c for c in args[0] if c in runs.letters]:
            return f"-{hit[0]}"
        start = 1 + len(letters)
    for read in scan(args, start, runs.valued):
        text = args[read.at]
        if read.option == END:
            return None
        if read.option.startswith("--"):
            if read.option not in runs.others and long_in(read.option, runs.long):
                return read.option
        elif read.option and not _no_configuration(runs, read.option, read.value):
            if read.option[1] in runs.letters or _jump(runs, read.option, read.value):
                return read.option
        elif runs.plus and text.startswith("+") and len(text) > 1 and not text[1:].isdigit():
            return text
    return None


def _ssh_option(runs: _Runs, args: list[str]) -> str | None:
    """The option of ssh's ``args`` that makes it run a command here: ``-F``, ``-I``, or
    ``-o`` with a setting not known to run nothing (``_PLAIN_SSH_SETTING``). ssh reads
    options before its host and after it (not after ``--``), up to the command."""
    operands = 0
    for read in scan(args, 0, runs.valued):
        if read.option == END:
            return None
        if not read.option:
            operands += 1
            if operands > 1:  # the command it runs on the host
                return None
        elif _no_configuration(runs, read.option, read.value):
            continue
        elif (
            _jump(runs, read.option, read.value)
            or read.option[1:] in runs.letters
            or (read.option == "-o" and not _PLAIN_SSH_SETTING.fullmatch(read.value or ""))
        ):
            return read.option
    return None


#: sudo's options taking a value (sudo 1.9; ``_wrapper_grammar`` has its grammar)
_SUDO_VALUED: Final = frozenset("aCcDghpRrtTUu")
_SUDO_LONG_VALUED: Final = (
    *("--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot"),
    *("--role", "--type", "--command-timeout", "--other-user", "--user"),
)


def _sudo_edits(args: list[str]) -> bool:
    """Whether sudo's ``args`` give ``-e`` / ``--edit`` (it runs ``SUDO_EDITOR``,
    ``VISUAL`` or ``EDITOR``) before its first operand."""
    for read in scan(args, 0, _SUDO_VALUED, _SUDO_LONG_VALUED):
        if not read.option or read.option == END:
            return False
        if read.option == "-e" or (
            read.option.startswith("--") and long_in(read.option, ("--edit",))
        ):
            return True
    return False


def _no_configuration(runs: _Runs, option: str, value: str | None) -> bool:
    """Whether ``option`` is ssh's ``-F`` naming no configuration (``/dev/null``,
    ``none``)."""
    return runs.jump and option == "-F" and value in ("/dev/null", "none")


def _jump(runs: _Runs, option: str, value: str | None) -> bool:
    """Whether ``option`` is ssh's ``-J`` with a value that is no plain hop list."""
    return runs.jump and option == "-J" and not _PLAIN_HOPS.fullmatch(value or "")
