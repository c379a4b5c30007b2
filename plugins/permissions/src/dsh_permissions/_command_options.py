"""Options of programs the plugin models that make them run a command it does not look
into: tar's ``--to-command``, ``-I``, ``-F``, ``--rsh-command``,
``--checkpoint-action``; ``split --filter``; ``rsync -e``/``--rsync-path``; ``zip
-T``/``-TT``; ``scp``'s and ``sftp``'s ``-S``/``-o``/``-F`` (``sftp -b``/``-D`` too);
``rg --pre``; ``fd -x`` / ``-X``; ``strace -o '|CMD'``; ``bat``'s, ``ag``'s and
``ack``'s ``--pager``; ``diff3`` and ``sdiff --diff-program``; ``install
--strip-program``; ``man -P``, ``-H``, ``-C``; ``systemd-run -p``/``-E`` (``run0
--property``/``--setenv``); ``srun --prolog`` and the like; ``chpst -e``;
``pygmentize -x``; ``tcpdump -z``; ``ssh-keygen -D``/``-w``, ``ssh-add -s``/``-S``/``-e``;
``openssl -engine``/``-provider``/``-pre``/``-config``; ``rpm -E``/``-D``; ``crontab
FILE``; ``logrotate CONF`` (its scripts), ``-m``; ``ssh -F``, ``-I``
and ``-o`` with a setting not known to run nothing (``ProxyCommand``, ``LocalCommand``,
``Match exec``, ...; ``-o BatchMode=yes`` runs none); ``sort --compress-program``;
``cpio --rsh-command``; ``wget --use-askpass``, ``--config`` and ``-e`` (but for a few
commands known to run nothing: ``-e robots=off``); an editor's commands (``vim -c``,
``+CMD``, ``--cmd``, ``-S``, ``-s``, ex mode, ``nvim -l``; ``emacs --eval``;
``emacsclient -e``/``-a``; ``ed`` and ``ex``, which take their commands from their
input); ``mail`` and ``mailx`` (their input's ``~!CMD``, a recipient ``|CMD``, ``-S
sendmail=CMD``: any use); ``mutt -e``/``-F`` (``set sendmail="CMD"``); ``exim``
(any use: ``-be '${run{CMD}}'``), ``sendmail`` and the like given an option not known
to be plain (``_mail_transfer``), Postfix's tools' ``-c``, ``postmulti -x``; git's ``-c``
with a setting that may run one, ``--exec-path``, ``git config`` storing such a setting
and a subcommand's option that runs one (``rebase -x``, ``bisect run``, ``clone -c``:
``_git.runs_command``); and the environment variables that do the
same (``TAR_OPTIONS``; set in the line: ``RSYNC_RSH``, ``GIT_CONFIG_PARAMETERS``,
``GIT_SSH_COMMAND``, ``LESSOPEN``, ``VIMINIT``, ``EXINIT``, ``MYVIMRC``, ``WGETRC``, GNU
parallel's ``PARALLEL``, ``PARALLEL_SHELL``, ``PARALLEL_SSH``, ``PARALLEL_HOME`` and the
like, ``SSH_ASKPASS`` and ``SSH_ASKPASS_REQUIRE`` for ssh and what runs it (scp, sftp,
rsync, git, parallel), ``SUDO_ASKPASS`` for sudo, ``SUDO_EDITOR``, ``VISUAL`` and
``EDITOR`` for ``sudo -e`` and sudoedit, ``LD_PRELOAD``, ``PERL5OPT``,
``NODE_OPTIONS`` and the like (``LOADER_VARIABLES``, but for a plain value before the
program: ``_plain``) for every program, ``PAGER`` for git, the editor, pager and
browser ``sensible-editor`` and the like run, and ``HOME`` for git, gpg, vim, emacs, wget
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
from typing import Final

from dsh_permissions._build_tools import build_runs
from dsh_permissions._getopt import END, long_in, scan
from dsh_permissions._git import runs_command
from dsh_permissions._mail_transfer import SUBMITTERS, submission_runs
from dsh_permissions._option_variables import (
    LOADER_VARIABLES,
    PLAIN_LOADER_VALUES,
    SUDOEDIT_VARIABLES,
    named,
    set_in_line,
)
from dsh_permissions._program_runs import RUNS, SSHS, Runs
from dsh_permissions._tar import TARS, disputed, old_style
from dsh_permissions._wget import without_plain_commands

__all__ = ["hidden"]


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
    if loaded := [v for v in LOADER_VARIABLES if _set_here(v, before) and not _plain(v, before)]:
        return f"{loaded[0]} may make {name} load code that is not looked into"
    built = build_runs(name, words[index + 1 :], before, lambda v: _set_here(v, before))
    if built is not None:
        return built
    runs = RUNS.get(name)
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
    if name == "crontab" and (table := _operand(args, "u")) is not None:
        return f"crontab {table} installs commands that run later, which are not looked into"
    if name == "logrotate" and (conf := _operand(args, "sml", _LOGROTATE_LONG)) is not None:
        return (
            f"logrotate runs the scripts {conf} gives (postrotate, ...), which are not looked into"
        )
    if name == "less" and (why := _less(args, before)) is not None:
        return why
    if name == "git":
        option = runs_command(args)
    elif name in SUBMITTERS:
        option = submission_runs(args)
    elif name == "openssl":
        option = next((a for a in args if a in _OPENSSL_LOADS), None)
    elif name == "strace":
        option = _piped(args)
    else:
        option = _ssh_option(runs, args) if name in SSHS else _option(runs, args)
    if option is None:
        return None
    return f"{name} {option} runs a command that is not looked into"


#: openssl's options that load a library (an engine, a provider, a configuration that
#: may name them; ``engine -pre SO_PATH:lib``)
_OPENSSL_LOADS: Final = frozenset(
    {"-engine", "-keyengine", "-provider", "-provider-path", "-pre", "-post", "-config"}
)


#: logrotate's long options taking a value (its configuration is an operand)
_LOGROTATE_LONG: Final = ("--state", "--mail", "--log")


def _operand(args: list[str], valued: str, long_valued: tuple[str, ...] = ()) -> str | None:
    """The first operand of ``args``, or None: the file (or ``-``: its input) ``crontab``
    installs as the table (``crontab -l``, ``-e``, ``-r``: none), the configuration
    logrotate reads (``logrotate --version``: none)."""
    for read in scan(args, 0, valued, long_valued):
        if read.option == END:
            continue
        if not read.option:
            return args[read.at]
    return None


#: less's ``+CMD`` (``++CMD`` on every file) that runs no command: a line, the end, follow,
#: a percent, a search (up to the end of the line: ``+/x`` then ``!rm`` would run ``rm``)
_PLAIN_LESS_COMMAND: Final = re.compile(r"\+\+?(?:[0-9]*[gGFpP%]?|/[^\x00-\x1f]*)")
#: a ``LESS`` of plain options: no ``+CMD``, no lesskey file (``k``), no log file (``oO``)
_PLAIN_LESS: Final = re.compile(r"-?[A-Za-jl-np-z0-9#~ -]*")


def _less(args: list[str], before: list[str]) -> str | None:
    """Why less runs a command its ``+CMD`` (``+!rm x``: also in ``LESS``) gives."""
    if plus := next(
        (a for a in args if a[:1] == "+" and not _PLAIN_LESS_COMMAND.fullmatch(a)), None
    ):
        return f"less {plus} runs commands that are not looked into"
    values = [t.split("=", 1)[1] for t in before if t.startswith("LESS=")]
    plain = bool(values) and len(values) == sum(named("LESS", t) for t in before)
    if _set_here("LESS", before) and not (plain and all(_PLAIN_LESS.fullmatch(v) for v in values)):
        return "LESS may make less run a command that is not looked into"
    return None


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


def _plain(name: str, before: list[str]) -> bool:
    """Whether the loader variable ``name`` is set before the program (which overrides
    what the line exported before), each time to a value whose every word is known to
    load nothing (``PLAIN_LOADER_VALUES``), and named in no other way there (``+=``,
    ``env -u``)."""
    plain = PLAIN_LOADER_VALUES.get(name)
    if plain is None:
        return False
    values = [t.split("=", 1)[1] for t in before if t.startswith(f"{name}=")]
    if not values or len(values) != sum(named(name, t) for t in before):
        return False
    return all(plain.fullmatch(w) for v in values for w in v.split() or [""])


def _option(runs: Runs, args: list[str]) -> str | None:
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


def _ssh_option(runs: Runs, args: list[str]) -> str | None:
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


def _no_configuration(runs: Runs, option: str, value: str | None) -> bool:
    """Whether ``option`` is ssh's ``-F`` naming no configuration (``/dev/null``,
    ``none``)."""
    return runs.jump and option == "-F" and value in ("/dev/null", "none")


def _jump(runs: Runs, option: str, value: str | None) -> bool:
    """Whether ``option`` is ssh's ``-J`` with a value that is no plain hop list."""
    return runs.jump and option == "-J" and not _PLAIN_HOPS.fullmatch(value or "")
