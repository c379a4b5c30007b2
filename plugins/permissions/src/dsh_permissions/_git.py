"""git's global options, which stand between ``git`` and its subcommand.

``git -C . push``, ``git -c core.pager=less push`` and ``git --no-pager push`` run
``git push``, but their text does not start with it: a rule ``ask: bash(git push*)``
would miss them. Deny and ask rules are also checked against the command with git's
global options left out (allow rules are not: an option such as ``-c core.pager=...``
changes what an allowed command runs).

A setting given with ``-c`` or ``--config-env`` may make git run a command
(``core.pager``, ``core.sshCommand``, ``core.fsmonitor``, ``alias.*``, a diff or filter
driver, ...): any but the few known to run nothing (``user.*``, ``color.*``, a pager
that is ``cat`` or off) is one git runs unseen, and so is one ``git config`` stores
for later; so are ``--exec-path=DIR`` and a subcommand's option or operand that runs
a command (``rebase -x``, ``bisect run``, ``submodule foreach``, ``--upload-pack``,
``daemon --access-hook``, ``filter-repo``'s callbacks, ``remote-ext``, ...):
``runs_command``; so is a global option not known here (it may take the next
word: which is the subcommand is not known).
"""

from __future__ import annotations

from typing import Final

from dsh_permissions._getopt import long_option, may_give
from dsh_permissions._git_config import plain_setting, sets_command

__all__ = ["reads_worktree", "runs_command", "subcommand", "without_global_options"]

#: global options whose value is the next word (``git -C dir``, ``git --git-dir dir``;
#: git.c's ``handle_options``, 2.39 and later: ``--attr-source`` came in 2.42)
_VALUED: Final = frozenset(
    {
        *("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix"),
        *("--config-env", "--attr-source", "--shallow-file"),
    }
)
#: global options of one word: a flag, or (``_JOINED``) given its value after ``=``;
#: ``--help``, ``--version`` run ``git help``/``git version`` with the words after them
_FLAGS: Final = frozenset(
    {
        *("-v", "--version", "-h", "--help", "--html-path", "--man-path", "--info-path"),
        *("-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--bare"),
        *("--literal-pathspecs", "--no-literal-pathspecs", "--glob-pathspecs"),
        *("--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks"),
        *("--no-lazy-fetch", "--no-advice", "--exec-path"),
    }
)
_JOINED: Final = frozenset(
    {
        *("--exec-path", "--git-dir", "--work-tree", "--namespace", "--super-prefix"),
        *("--config-env", "--list-cmds", "--attr-source"),
    }
)


#: subcommands' options that run a command (short ones in a cluster too; long ones
#: abbreviated as git's parse-options takes them)
_SUBCOMMAND_RUNS: Final = {
    "rebase": ("-x", "--exec"),
    "difftool": ("-x", "--extcmd"),
    **dict.fromkeys(("fetch", "pull", "ls-remote"), ("--upload-pack",)),
    "clone": ("-u", "--upload-pack", "--template"),
    # the template's hooks are copied into the new repository, and run by its commits
    "init": ("--template",),
    "grep": ("-O", "--open-files-in-pager"),
    "instaweb": ("-d", "--httpd", "-b", "--browser"),
    "push": ("--receive-pack", "--exec"),
    "archive": ("--exec",),
    "send-email": ("--sendmail-cmd", "--smtp-server", "--to-cmd", "--cc-cmd", "--header-cmd"),
    "filter-branch": (
        *("--env-filter", "--tree-filter", "--index-filter", "--parent-filter"),
        *("--msg-filter", "--commit-filter", "--tag-name-filter"),
    ),
    # git-filter-repo's callbacks are Python code it runs
    "filter-repo": (
        *("--filename-callback", "--message-callback", "--name-callback"),
        *("--email-callback", "--refname-callback", "--blob-callback", "--commit-callback"),
        *("--tag-callback", "--reset-callback", "--file-info-callback"),
    ),
    "daemon": ("--access-hook",),
}
#: subcommands whose operand runs the words after it: ``git bisect run CMD``
_OPERAND_RUNS: Final = {"bisect": "run", "submodule": "foreach"}
#: subcommands that run a command they are given whatever their options: ``git
#: remote-ext URL 'sh -c ...'`` (the ext:: transport's helper, run directly: git's
#: protocol.ext.allow is not asked)
_ALWAYS_RUNS: Final = frozenset({"remote-ext"})


def runs_command(args: list[str]) -> str | None:
    """What in ``git ARGS`` may make git run a command not given as one (see the
    module), or None: a setting of ``-c NAME=VALUE`` / ``--config-env=NAME=VAR`` that
    may run one (``git clone -c``/``--config`` too: it applies them before its
    checkout, whose hooks run), ``--exec-path``, ``git config`` storing such a setting,
    or a subcommand's option that does (``_SUBCOMMAND_RUNS``). A global option not
    known here fails closed: whether it takes the next word, and so which word is the
    subcommand, is not known."""
    options, end = _global_options(args, 0)
    for index in options:
        text = args[index]
        given = args[index + 1] if index + 1 < len(args) else ""
        option, equals, value = text.partition("=")
        setting = None
        if text == "-c":
            setting = given
        elif option == "--config-env":  # the value is in a variable: not known here
            setting = (value if equals else given).split("=", 1)[0] + "=\0"
        elif text.startswith("-c"):
            setting = text[2:]
        elif option == "--exec-path" and equals:
            return "--exec-path (the directory it runs its commands from)"
        elif not _known(text):  # a newer git's, which may take the next word: not guessed
            return f"{text} (a global option not known here)"
        if setting is not None and (running := _running(setting)):
            return running
    rest = args[end:]
    if not rest:
        return None
    if rest[0] == "config" and sets_command(rest[1:]):
        return "config (a setting that runs a command)"
    if rest[0] in _ALWAYS_RUNS:
        return f"{rest[0]} (it runs the command it is given)"
    if rest[0] in _OPERAND_RUNS and _OPERAND_RUNS[rest[0]] in rest[1:]:
        return f"{rest[0]} {_OPERAND_RUNS[rest[0]]}"
    if rest[0] == "clone" and (running := _clone_settings(rest[1:])):
        return f"clone {running}"
    if ext := next((w for w in rest[1:] if w[:5].casefold() == "ext::"), None):
        return f"{rest[0]} {ext} (the ext:: transport runs it, where git's settings allow)"
    options_run = _SUBCOMMAND_RUNS.get(rest[0], ())
    for word in rest[1:]:
        if (found := next((o for o in options_run if may_give(word, o)), None)) is not None:
            return f"{rest[0]} {found}"
    return None


def _known(option: str) -> bool:
    """Whether ``option`` is one of git's global options (``-cNAME=VALUE``, which git
    refuses, is read as ``-c NAME=VALUE``)."""
    name, equals, _ = option.partition("=")
    return (
        option in _VALUED
        or option in _FLAGS
        or (bool(equals) and name in _JOINED)
        or option.startswith("-c")
    )


def _running(setting: str) -> str | None:
    """``-c NAME`` when the setting ``NAME=VALUE`` may run a command, else None."""
    if plain_setting(setting):
        return None
    return f"-c {setting.split('=', 1)[0] or '(a setting not known here)'}"


def _clone_settings(args: list[str]) -> str | None:
    """What ``git clone ARGS``'s ``-c``/``--config`` settings may run (see
    ``_running``), or None; a short cluster with ``c`` counts (``-nc NAME=VALUE``)."""
    for at, text in enumerate(args):
        given = args[at + 1] if at + 1 < len(args) else ""
        if may_give(text, "--config"):
            setting = text.partition("=")[2] if "=" in text else given
        elif may_give(text, "-c"):
            setting = text[text.index("c") + 1 :] or given
        else:
            continue
        if running := _running(setting):
            return running
    return None


def subcommand(words: list[str]) -> list[str]:
    """``SUBCOMMAND ARGS...`` for ``words`` = ``git [global options] SUBCOMMAND
    ARGS...`` (empty when there is no subcommand: ``git --version``)."""
    return words[_global_options(words, 1)[1] :]


def _global_options(words: list[str], start: int) -> tuple[list[int], int]:
    """The indexes of git's global options in ``words`` from ``start`` (a value of one,
    the next word, is not among them), and that of the subcommand after them."""
    found: list[int] = []
    index = start
    while index < len(words) and words[index].startswith("-"):
        found.append(index)
        index += 2 if words[index] in _VALUED else 1
    return found, index


def without_global_options(words: list[str]) -> list[str] | None:
    """``git SUBCOMMAND ARGS...`` for ``words`` = ``git [global options] SUBCOMMAND
    ARGS...``, or None when there are no global options (or no subcommand)."""
    rest = subcommand(words)
    if not rest or len(rest) == len(words) - 1:
        return None
    return [words[0], *rest]


def reads_worktree(words: list[str]) -> str | None:
    """Why ``git ...`` (``words``, git first) reads files of the directory, not of the
    repository, or None: ``git grep --no-index`` / ``--untracked`` searches every file
    (ignored ones too), ``git diff --no-index A B`` prints them, ``git config -f
    FILE`` (``--file``) the settings FILE holds, and ``git hash-object FILE`` its sum."""
    rest = subcommand(words)
    if rest[:1] == ["config"] and any(_config_file(a) for a in rest[1:]):
        return "git config -f reads a file it is given, which is not looked at"
    if rest[:1] == ["hash-object"] and any(not a.startswith("-") for a in rest[1:]):
        return "git hash-object reads the files it is given, which are not looked at"
    if rest[:1] not in (["grep"], ["diff"]):
        return None
    given = [a for a in rest[1:] if a in ("--no-index", "--untracked")]
    if not given:
        return None
    return f"git {rest[0]} {given[0]} reads files of the directory, which are not looked at"


def _config_file(word: str) -> bool:
    """``-f`` (also in a cluster, ``-lf``, or with its value, ``-f.env``) or ``--file``
    (shortened too): read generously, a word that may be a value counts."""
    if word.startswith("--"):
        return long_option(word, "--file")
    return may_give(word, "-f")
