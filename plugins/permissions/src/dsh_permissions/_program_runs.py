"""Which programs the plugin models run a command through their options or environment
(``_command_options`` reads them): per program, its options that do (their value the
command, or a file of commands), the ones that take a value, and the variables that
give it options or a command.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from dsh_permissions._mail_transfer import SUBMITTERS
from dsh_permissions._option_variables import (
    GIT_LINE_VARIABLES,
    GPG_VARIABLES,
    LESS_VARIABLES,
    PARALLEL_VARIABLES,
    RSYNC_VARIABLES,
    SEARCHER_VARIABLES,
    SSH_VARIABLES,
    SUDO_VARIABLES,
    SUDOEDIT_VARIABLES,
    TAR_VARIABLES,
    VIM_VARIABLES,
    WGET_VARIABLES,
)
from dsh_permissions._tar import TAR_VALUED, TARS

__all__ = ["RUNS", "SSHS", "Runs"]


@dataclass(frozen=True)
class Runs:
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


_TAR: Final = Runs(
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
_VIM: Final = Runs(
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
#: the mail programs of POSIX mailx's family (bsd-mailx, s-nail, heirloom, mailutils)
_MAILERS: Final = frozenset(
    {"mail", "mailx", "Mail", "nail", "s-nail", "bsd-mailx", "heirloom-mailx"}
)
#: ssh, also under its old name
SSHS: Final = frozenset({"ssh", "slogin"})
_SSH: Final = Runs(
    letters="FI",
    valued=frozenset("BbcDEeFIiJLlmOoPpQRSWw"),
    line_variables=SSH_VARIABLES,
    jump=True,
)
RUNS: Final = {
    **dict.fromkeys(TARS, _TAR),
    **dict.fromkeys(("split", "gsplit"), Runs(long=("--filter",))),
    "rsync": Runs(
        letters="e",
        valued=frozenset("eBfMT@"),
        long=("--rsh", "--rsync-path"),
        line_variables=(*RSYNC_VARIABLES, *SSH_VARIABLES),
    ),
    "zip": Runs(letters="T", valued=frozenset("bnOtPZs"), long=("--unzip-command",)),
    "scp": Runs(
        letters="DFSo", valued=frozenset("cDFiJloPSX"), line_variables=SSH_VARIABLES, jump=True
    ),
    # -b: a batch file's ``!CMD``; -D: a local sftp server
    "sftp": Runs(
        letters="bDFSo",
        valued=frozenset("BbcDFiJloPRSsX"),
        line_variables=SSH_VARIABLES,
        jump=True,
    ),
    **dict.fromkeys(("sort", "gsort"), Runs(long=("--compress-program",))),
    "cpio": Runs(long=("--rsh-command",)),
    "wget": Runs(
        letters="e",
        valued=frozenset("aABDiIlOoPQRtTUwX"),
        long=("--use-askpass", "--execute", "--config"),
        line_variables=(*WGET_VARIABLES, "HOME"),
    ),
    **dict.fromkeys(("vi", "vim", "view", "gvim", "vimdiff", "rvim"), _VIM),
    "nvim": _NVIM,
    "emacs": Runs(
        letters="lfsx",
        valued=frozenset("dLtT"),
        long=("--eval", "--load", "--funcall", "--script", "--execute"),
        line_variables=("HOME",),
    ),
    # -e: lisp a running emacs evaluates; -a: an editor run when none is
    "emacsclient": Runs(
        letters="ea", valued=frozenset("asfFdwT"), long=("--eval", "--alternate-editor")
    ),
    **dict.fromkeys(("ed", "red", "ex"), Runs(always=True)),
    # mail and mailx run what their input's tilde escapes give (~!CMD, ~|CMD), a
    # recipient |CMD and the sendmail or editor a -S variable names
    **dict.fromkeys(_MAILERS, Runs(always=True)),
    # -e: configuration commands (set sendmail="CMD", a backtick); -F: a file of them
    **dict.fromkeys(
        ("mutt", "neomutt"),
        Runs(
            letters="eF",
            valued=frozenset("bcdeFfHimQs"),
            line_variables=("HOME", "XDG_CONFIG_HOME"),
        ),
    ),
    # exim runs the ${run{CMD}} of what it expands (-be, -bem, its input), of the ACLs a
    # -bh session goes through, and of the configuration -C or -D gives
    **dict.fromkeys(("exim", "exim4"), Runs(always=True)),
    # sendmail and the like (any of exim, Postfix's, sendmail's, msmtp's): any option
    # but a few plain ones (_mail_transfer); msmtp's configuration, Postfix's directory
    **dict.fromkeys(SUBMITTERS, Runs(line_variables=("HOME", "XDG_CONFIG_HOME", "MAIL_CONFIG"))),
    # Postfix's tools load what a configuration directory names (dynamicmaps.cf, its
    # daemon_directory's scripts); postmulti -x runs a command. Their options differ
    # from tool to tool: each letter is read as taking no value (stricter)
    **dict.fromkeys(
        (
            *("postfix", "postconf", "postmap", "postalias", "postqueue", "postsuper"),
            *("postcat", "postdrop", "postkick", "postlock", "postlog"),
        ),
        Runs(letters="c", line_variables=("MAIL_CONFIG",)),
    ),
    "postmulti": Runs(letters="cx", line_variables=("MAIL_CONFIG",)),
    **dict.fromkeys(
        ("gpg", "gpg2"),
        Runs(
            long=("--photo-viewer", "--exec-path", "--options", "--homedir"),
            line_variables=(*GPG_VARIABLES, "HOME"),
        ),
    ),
    # -k / --lesskey-*: a lesskey file, which may set LESSOPEN (less 643); its +CMD is
    # read in _command_options (+G passes, +!CMD runs CMD)
    "less": Runs(
        letters="k",
        valued=frozenset("bhjkoOpPtTxyz#D"),
        long=("--lesskey-file", "--lesskey-src", "--lesskey-content"),
        line_variables=(*LESS_VARIABLES, "LESSKEY", "LESSKEYIN", "LESSKEY_CONTENT"),
    ),
    # rg runs --pre COMMAND on each file it searches (its config file may give it);
    # bat, ag and ack run their pager (bat's config, ack's options in a variable)
    "rg": Runs(long=("--pre",), line_variables=SEARCHER_VARIABLES[:1]),
    **dict.fromkeys(
        ("bat", "batcat"),
        Runs(
            long=("--pager",),
            line_variables=(*SEARCHER_VARIABLES[1:4], "XDG_CONFIG_HOME", "HOME"),
        ),
    ),
    "ag": Runs(long=("--pager",)),
    # fd runs its -x / --exec (-X / --exec-batch) command on each file it finds
    **dict.fromkeys(
        ("fd", "fdfind"),
        Runs(letters="xX", valued=frozenset("dteEcjSoxX"), long=("--exec", "--exec-batch")),
    ),
    # strace -o '|CMD' (or '!CMD') pipes its output to CMD, run by a shell (_piped)
    "strace": Runs(),
    # the program they compare with, and the one install -s strips with
    **dict.fromkeys(("diff3", "sdiff"), Runs(long=("--diff-program",))),
    **dict.fromkeys(("install", "ginstall"), Runs(long=("--strip-program",), others=("--strip",))),
    "ack": Runs(long=("--pager",), line_variables=(*SEARCHER_VARIABLES[4:], "HOME")),
    # -F: a configuration (ProxyCommand, Match exec); -I: a PKCS#11 library it loads;
    # -o: a setting not known to run nothing (_ssh_option); -J: _jump
    **dict.fromkeys(SSHS, _SSH),
    **dict.fromkeys(("sudo", "sudoedit"), Runs(line_variables=SUDO_VARIABLES)),
    # its options, shell, ssh command and profiles (its own options: _parallel)
    **dict.fromkeys(
        ("parallel", "sem"),
        Runs(line_variables=(*PARALLEL_VARIABLES, *SSH_VARIABLES, "HOME", "XDG_CONFIG_HOME")),
    ),
    # man runs its pager (-P) and browser (-H) through a shell; -C: a configuration
    # naming them (man-db 2.12)
    "man": Runs(
        letters="PHC",
        valued=frozenset("CMSsemLpPrER"),
        long=("--pager", "--html", "--config-file"),
        line_variables=("MANPAGER", "PAGER", "BROWSER", "MANOPT"),
    ),
    # a unit's properties run commands of their own (ExecStartPre=); -E: the command's
    # environment (LD_PRELOAD=)
    "systemd-run": Runs(
        letters="pE",
        valued=frozenset("upEMHC"),
        long=(
            *("--property", "--setenv", "--path-property", "--socket-property"),
            "--timer-property",
        ),
    ),
    "run0": Runs(valued=frozenset("ugD"), long=("--property", "--setenv")),
    "srun": Runs(long=("--prolog", "--epilog", "--task-prolog", "--task-epilog")),
    # -e DIR: the variables its files hold (PATH=, LD_PRELOAD=)
    "chpst": Runs(letters="e", valued=frozenset("uUbe/nlLmdofcrt")),
    # -x: a lexer, formatter or filter loaded from a Python file (-l lexer.py:L)
    "pygmentize": Runs(letters="x", valued=frozenset("lfFoOPaS")),
    # tcpdump -z: a command run on each file it rotates to (-G, -C)
    "tcpdump": Runs(letters="z", valued=frozenset("BcCEFGijMmQrsTVwWyzZ")),
    # a library they load (-D, -w: PKCS#11, FIDO) or have the agent load (-s, -S, -e)
    "ssh-keygen": Runs(letters="Dw", valued=frozenset("CDEFIMNOPRVYZabfgjmnrstwz")),
    "ssh-add": Runs(letters="sSe", valued=frozenset("EehHMmsSt")),
    # macros (-E, -D, --eval, --define, a file of them) whose %(...) runs a command
    **dict.fromkeys(
        ("rpm", "rpmbuild", "rpmspec"),
        Runs(
            letters="ED",
            valued=frozenset("DE"),
            long=("--eval", "--define", "--macros", "--rcfile", "--load"),
        ),
    ),
    # engines, providers and configurations load libraries (_command_options._openssl)
    "openssl": Runs(line_variables=("OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES")),
    # the editor the line names (crontab -e, visudo, systemctl edit, kubectl edit)
    **dict.fromkeys(("crontab", "visudo"), Runs(line_variables=SUDOEDIT_VARIABLES)),
    "systemctl": Runs(line_variables=("SYSTEMD_EDITOR", *SUDOEDIT_VARIABLES)),
    "kubectl": Runs(line_variables=("KUBE_EDITOR", *SUDOEDIT_VARIABLES)),
    # the editor, pager and browser the line names (Debian's sensible-utils; an
    # editor chosen earlier is in ~/.selected_editor)
    "sensible-editor": Runs(line_variables=(*SUDOEDIT_VARIABLES, "SELECTED_EDITOR", "HOME")),
    "sensible-pager": Runs(line_variables=("PAGER",)),
    "sensible-browser": Runs(line_variables=("BROWSER",)),
    # -m / --mail: the command it mails with (its configuration: _command_options)
    "logrotate": Runs(letters="m", valued=frozenset("sml"), long=("--mail",)),
    # the startup files a shell reads (code): zsh's ~/.zshenv always (ZDOTDIR), a login
    # or interactive shell's ~/.profile, ~/.bashrc, csh's ~/.cshrc always
    **dict.fromkeys(
        ("sh", "bash", "dash", "ksh", "mksh", "ash", "yash", "posh", "csh", "tcsh"),
        Runs(line_variables=("HOME",)),
    ),
    "zsh": Runs(line_variables=("ZDOTDIR", "HOME")),
    "fish": Runs(line_variables=("HOME", "XDG_CONFIG_HOME")),
    # HOME: git reads ~/.gitconfig (HOME=. git status); PAGER: its pager when no
    # GIT_PAGER or core.pager is set
    "git": Runs(line_variables=(*GIT_LINE_VARIABLES, *SSH_VARIABLES, "HOME", "PAGER")),
}
