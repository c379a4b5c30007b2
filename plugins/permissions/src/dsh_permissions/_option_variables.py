"""Environment variables that change how a program reads its arguments: ``TAR_OPTIONS``,
``UNZIP`` and ``UNZIPOPT`` give tar and unzip options (``_relinked``), and
``POSIXLY_CORRECT``, set to anything (empty too), makes GNU getopt stop at a program's
first operand, so a later ``-n .env`` is two files (``_reader_args``). ``RSYNC_RSH``,
``GIT_CONFIG_PARAMETERS``, ``GIT_SSH_COMMAND``, ``LESSOPEN``, ``VIMINIT``, ``WGETRC``,
``PARALLEL``, ``PARALLEL_SHELL``, ``SSH_ASKPASS`` and the like make rsync, git, less,
vim, wget, GNU parallel, ssh and sudo run a command
(``_command_options``): for them too only what the line sets counts. ``HOME``,
``OLDPWD`` and bash's ``cdable_vars`` change what ``~`` and ``cd`` name
(``_line_vars``): for them only what the line sets counts.

Such a variable may reach a command in three ways, each counted:

- set before it (``NAME=value cmd``, ``env NAME=value cmd``, ``sudo NAME=value cmd``):
  the words before the program;
- set by an earlier command of the line (and of the lines it runs: ``sh -c``,
  ``xargs``), for the rest of it: any command naming it in any word (``export
  NAME=1``, ``declare -x NAME``, ``read NAME``; also ``NAME=1 sh -c '...'``, whose
  script inherits it; not ``grep NAME``: see below; not a plain read, ``$NAME`` or
  ``${NAME}``, which sets nothing: ``cd $HOME``, ``export PATH=$HOME/bin``); and any
  variable at all after ``source`` / ``.``, ``set -a`` / ``set -o allexport``, or
  ``export`` / ``declare`` / ``typeset`` / ``readonly`` / ``local`` given a word only
  the shell fills in (``export $v``);
- inherited (``TAR_OPTIONS``, ``UNZIP``, ``UNZIPOPT``, ``POSIXLY_CORRECT``): the bash
  tool runs a command with dsh's own environment
  (``dsh.builtin_tools._bash.command_environment``), so one set there counts.

Fail closed: naming it counts whatever the command does with it, but for a command known
to set no variable that way (``grep -rn EDITOR src``, ``echo HOME``, ``printf '%s'
VISUAL``; ``unset GIT_PAGER``, which leaves git its default): there only its
assignments and its words holding an expansion count (``echo ${EDITOR:=x}`` sets it),
and what ``printf -v`` sets (``unset HOME`` counts: bash's ``~`` is then the home in
the password database, which may not be dsh's ``HOME``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import Final

from dsh_permissions._scoped import scoped
from dsh_permissions._wrappers import skip_assignments

__all__ = [
    "BACKUP_VARIABLES",
    "CARGO_VARIABLES",
    "GIT_LINE_VARIABLES",
    "GO_VARIABLES",
    "GPG_VARIABLES",
    "LESS_VARIABLES",
    "LOADER_VARIABLES",
    "NPM_VARIABLES",
    "PARALLEL_VARIABLES",
    "PLAIN_LOADER_VALUES",
    "POSIXLY_CORRECT",
    "PROGRAM_VARIABLES",
    "RSYNC_VARIABLES",
    "RUSTFLAGS_VARIABLES",
    "SEARCHER_VARIABLES",
    "SEARCH_PATH",
    "SHELL_PLACES",
    "SSH_VARIABLES",
    "SUDOEDIT_VARIABLES",
    "SUDO_VARIABLES",
    "TAR_VARIABLES",
    "VIM_VARIABLES",
    "WATCHED",
    "WGET_VARIABLES",
    "line_snapshot",
    "line_variables",
    "named",
    "note",
    "set_for",
    "set_in_line",
]

#: the variables that give tar and unzip options
TAR_VARIABLES: Final = ("TAR_OPTIONS", "UNZIP", "UNZIPOPT")
#: set (to anything), GNU getopt stops at the first operand
POSIXLY_CORRECT: Final = ("POSIXLY_CORRECT",)
#: what ``~`` and ``cd`` read (``_line_vars``): ``cdable_vars`` is bash's option, which
#: ``BASHOPTS`` turns on for a new bash
SHELL_PLACES: Final = ("HOME", "OLDPWD", "BASHOPTS", "cdable_vars")
#: what make rsync, git, less, vim and wget run a command (``_command_options``),
#: counted only when the line sets them (dsh's own are the person's)
RSYNC_VARIABLES: Final = ("RSYNC_RSH", "RSYNC_CONNECT_PROG")
LESS_VARIABLES: Final = ("LESSOPEN", "LESSCLOSE")
VIM_VARIABLES: Final = ("VIMINIT", "EXINIT", "MYVIMRC")
WGET_VARIABLES: Final = ("WGETRC",)
GIT_LINE_VARIABLES: Final = (
    *("GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS"),
    *("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER"),
    *("GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "EDITOR"),
    *("GIT_PROXY_COMMAND", "VISUAL", "XDG_CONFIG_HOME", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR"),
)
#: gpg's home, whose ``gpg.conf`` may name a program it runs (``photo-viewer``)
GPG_VARIABLES: Final = ("GNUPGHOME",)
#: a program ssh runs for a password (and when: ``force``), so do scp, sftp, rsync,
#: git and parallel, which run ssh
SSH_VARIABLES: Final = ("SSH_ASKPASS", "SSH_ASKPASS_REQUIRE")
#: a program sudo runs for a password (``-A``)
SUDO_VARIABLES: Final = ("SUDO_ASKPASS",)
#: the editor ``sudo -e`` / ``sudoedit`` runs (a command line)
SUDOEDIT_VARIABLES: Final = ("SUDO_EDITOR", "VISUAL", "EDITOR")
#: code loaded into any program (the dynamic loader's) or any perl (GNU parallel is a
#: Perl script): counted for every command (``LD_LIBRARY_PATH`` is not: docs, Limits)
LOADER_VARIABLES: Final = (
    *("LD_PRELOAD", "LD_AUDIT", "PERL5OPT", "PERL5LIB", "PERLLIB"),
    "GCONV_PATH",  # glibc loads the character set converters it names (iconv_open)
    # options every node, ruby or java program reads (npm, tsc, rake, gradle are ones):
    # --require, -r and -javaagent load code (plain values: ``PLAIN_LOADER_VALUES``)
    *("NODE_OPTIONS", "RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"),
)
_JAVA_PLAIN: Final = (
    r"-X(?:mx|ms|ss)[0-9]+[kKmMgG]?|-D(?:file\.encoding|java\.awt\.headless)=[A-Za-z0-9_-]+"
)
#: per loader variable, the words of a value known to load nothing (memory sizes,
#: warnings: ``NODE_OPTIONS=--max-old-space-size=4096 npm run build`` is common)
PLAIN_LOADER_VALUES: Final = {
    "NODE_OPTIONS": re.compile(
        r"--(?:max-old-space-size|max-semi-space-size|stack-size)=[0-9]+"
        r"|--(?:enable-source-maps|no-warnings|no-deprecation|trace-warnings)"
        r"|--(?:trace-deprecation|openssl-legacy-provider|trace-uncaught)"
        r"|--(?:unhandled-rejections|dns-result-order)=[a-z0-9-]+"
    ),
    "RUBYOPT": re.compile(r"-W[012]?|-W:no-(?:deprecated|experimental)"),
    **dict.fromkeys(
        ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"), re.compile(_JAVA_PLAIN)
    ),
}
#: what makes go, cargo and npm run a program the line names (``_build_tools``): go's
#: flags and the file of them; cargo's compiler, its wrapper, rustdoc and its
#: configuration, and its compiler flags (``-C linker=CMD``); npm's script shell, node
#: options and configuration files, in the two cases npm reads
GO_VARIABLES: Final = ("GOFLAGS", "GOENV")
CARGO_VARIABLES: Final = (
    *("RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTC", "RUSTDOC", "CARGO_HOME"),
    *("CARGO_BUILD_RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER"),
    *("CARGO_BUILD_RUSTC", "CARGO_BUILD_RUSTDOC"),
)
RUSTFLAGS_VARIABLES: Final = (
    *("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS"),
    *("RUSTDOCFLAGS", "CARGO_BUILD_RUSTDOCFLAGS"),
)
NPM_VARIABLES: Final = tuple(
    spelled
    for key in ("script_shell", "userconfig", "globalconfig", "node_options", "shell")
    for spelled in (f"npm_config_{key}", f"NPM_CONFIG_{key.upper()}")
)
#: the other variables programs of ``_program_runs`` read: the editor and browser
#: Debian's sensible-utils run, less's options and lesskey files, zsh's startup files
PROGRAM_VARIABLES: Final = (
    *("SELECTED_EDITOR", "BROWSER", "LESS", "LESSKEY", "LESSKEYIN", "LESSKEY_CONTENT"),
    "ZDOTDIR",  # where zsh's startup files are
)
#: GNU parallel's options (``PARALLEL``, ``PARALLEL_CSH``), the shell it runs commands
#: with, its ssh and tmux commands, rsync's options, code put before each command
#: (``PARALLEL_ENV``, or a file of it) and where its profiles are (``PARALLEL_HOME``,
#: ``XDG_CONFIG_DIRS``; ``HOME`` and ``XDG_CONFIG_HOME`` are watched already)
PARALLEL_VARIABLES: Final = (
    *("PARALLEL", "PARALLEL_CSH", "PARALLEL_SHELL", "PARALLEL_SSH", "PARALLEL_TMUX"),
    *("PARALLEL_RSYNC_OPTS", "PARALLEL_ENV", "PARALLEL_HOME", "XDG_CONFIG_DIRS", "SHELL"),
)
#: what makes rg run a command (its config file: ``--pre``), and bat and ack their
#: pager (``_command_options``)
SEARCHER_VARIABLES: Final = (
    *("RIPGREP_CONFIG_PATH", "BAT_PAGER", "PAGER", "BAT_CONFIG_PATH", "ACK_PAGER"),
    *("ACK_OPTIONS", "ACKRC"),
)
#: the backup suffix GNU's cp, mv, install, ln and patch take (``_backups``)
BACKUP_VARIABLES: Final = ("SIMPLE_BACKUP_SUFFIX",)
#: where ``source NAME`` and ``bash NAME`` look a script's name up (``_path_search``)
SEARCH_PATH: Final = ("PATH",)
#: every variable watched (one a line may set unseen: ``export POSIXLY_CORREC{T,}=1``)
WATCHED: Final = (
    *TAR_VARIABLES,
    *POSIXLY_CORRECT,
    *SHELL_PLACES,
    *RSYNC_VARIABLES,
    *LESS_VARIABLES,
    *VIM_VARIABLES,
    *WGET_VARIABLES,
    *GIT_LINE_VARIABLES,
    *GPG_VARIABLES,
    *PARALLEL_VARIABLES,
    *SSH_VARIABLES,
    *SUDO_VARIABLES,
    *SUDOEDIT_VARIABLES,
    *LOADER_VARIABLES,
    *SEARCH_PATH,
    *GO_VARIABLES,
    *CARGO_VARIABLES,
    *RUSTFLAGS_VARIABLES,
    *NPM_VARIABLES,
    *PROGRAM_VARIABLES,
    *SEARCHER_VARIABLES,
    *BACKUP_VARIABLES,
)
#: in a line's set: any variable may have been exported
_ANY: Final = "*"
#: builtins that export or declare the variables they are given
_DECLARING: Final = frozenset({"export", "declare", "typeset", "readonly", "local"})
#: commands that set no variable by naming it (their assignments still count; what
#: ``printf -v`` and ``unset`` set comes from ``_evaluated.set_names``, ``_line_vars``)
_SETS_NONE: Final = frozenset(
    {"echo", "printf", "cat", "grep", "egrep", "fgrep", "rg", "ls", "head", "tail", "wc"}
    | {"less", "more", "sort", "uniq", "cut", "diff", "git", "true", "false", "unset"}
)

_LINE: ContextVar[set[str] | None] = ContextVar("dsh_permissions_variables", default=None)


def line_variables() -> AbstractContextManager[None]:
    """The commands checked inside are one line: a variable one sets counts for the
    rest (nested: the outer line's scope is kept)."""
    return scoped(_LINE, set)


def line_snapshot() -> frozenset[str]:
    """The variables the line may have set so far (``*``: any)."""
    return frozenset(_LINE.get() or ())


def note(texts: list[str], also: Iterable[str] = ()) -> None:
    """Note the variables the simple command ``texts`` (its assignments included) may
    set for the rest of the line (see the module), and the names ``also``."""
    line = _LINE.get()
    if line is not None:
        line.update(_set_by(texts) if texts else (), also)


def set_for(names: tuple[str, ...], before: Iterable[str] = ()) -> bool:
    """Whether one of ``names`` may be in the environment of a command: named in the
    words ``before`` its program, set earlier in the line, or inherited."""
    return (
        any(name in os.environ for name in names)
        or set_in_line(names)
        or any(named(name, text) for text in before for name in names)
    )


def set_in_line(names: tuple[str, ...], *, anything: bool = True) -> bool:
    """Whether one of ``names`` may have been set by a command of the line noted so
    far; ``anything``: also when any variable may have been (``source``, ``set -a``)."""
    line = _LINE.get()
    return line is not None and ((anything and _ANY in line) or not line.isdisjoint(names))


def _set_by(texts: list[str]) -> set[str]:
    assigned = skip_assignments(texts)
    rest = texts[assigned:]
    while len(rest) > 1 and rest[0] in ("builtin", "command"):
        rest = rest[1:]
    counted = texts
    if rest and rest[0] in _SETS_NONE:  # an expansion may assign: ${EDITOR:=x}, $((X=1))
        counted = [*texts[:assigned], *(t for t in rest if "$" in t or "`" in t)]
    found = {
        run
        for text in counted
        for run in _RUNS.findall(_READS.sub("", text))
        if run in _WATCHED_SET
    }
    if not rest:
        return found
    name = rest[0]
    if (
        name in ("source", ".")
        or (
            name == "set"
            and any(t == "allexport" or (t[:1] in "-+" and "a" in t) for t in rest[1:])
        )
        or (name in _DECLARING and _declares_unknown(rest[1:]))
    ):
        found.add(_ANY)
    return found


#: one look per word for every watched name (``named``'s rule: a whole identifier, not
#: inside a longer one), where a search per name per word made a long line quadratic
_WATCHED_SET: Final = frozenset(WATCHED)
_RUNS: Final = re.compile(r"[A-Za-z0-9_]+")
#: a variable only read (``$HOME``, ``${HOME}``), which sets nothing: not counted
#: (``${HOME:=x}``, ``$((HOME=1))``, ``declare -n r=HOME`` still are)
_READS: Final = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})")


def named(name: str, text: str) -> bool:
    """Whether the word ``text`` names the variable ``name``: as a whole identifier
    (``HOME=x``, ``$HOME``, ``${HOME}``, ``r=HOME``, ``{HOME}``, ``HOME[0]``), not
    inside a longer one (``JAVA_HOME``, ``HOMEWORK.md``)."""
    return re.search(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])", text) is not None


def _declares_unknown(args: list[str]) -> bool:
    """Whether ``export``/``declare``/... ``ARGS`` may set a variable only the shell
    names: ``$`` or a backquote in a name (``export $v``, ``declare "$n"=1``), or in a
    value taken for a name or evaluated as arithmetic (``declare -n r=$v``, ``-i``)."""
    evaluated = any(t[:1] in "-+" and ("n" in t or "i" in t) for t in args)
    return any(
        "$" in part or "`" in part
        for t in args
        for part in ((t,) if evaluated else (t.partition("=")[0],))
    )
