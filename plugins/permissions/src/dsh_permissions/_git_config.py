"""Whether ``git config ARGS`` may store a setting that makes git run a command.

git's ``config`` stops at its first word that is not an option: the options before it
choose what it does (``--get``, ``--list``, ``--unset``, ...), and a later ``get``,
``list`` or ``-l`` is a value or a value pattern (``git config core.fsmonitor CMD
list`` stores CMD). The new style's subcommand (``get``, ``list``, ``set``, ``unset``,
...) is that first word. Without an action, one word reads a setting (``git config
core.pager``) and two or more store the second in the first. A setting is named by its
position, not by a ``.`` (``git config user.email dev@example.com``); when the words
are not understood (an option not known here, ``--rename-section``) every word counts
as a name, so one not known to run nothing makes it store one.
"""

from __future__ import annotations

from typing import Final

__all__ = ["plain_setting", "sets_command"]

#: settings that run nothing (lower case: git's names are; a prefix ends in ``.``)
_PLAIN_SETTINGS: Final = (
    *("user.", "color.", "advice.", "i18n.", "init.defaultbranch", "core.quotepath"),
    *("core.autocrlf", "core.safecrlf", "core.filemode", "core.ignorecase", "pull.rebase"),
    *("pull.ff", "merge.ff", "commit.gpgsign", "tag.gpgsign"),
    *("column.ui", "protocol.version", "core.abbrev"),
)
#: a pager that runs nothing: ``cat``, none, or (``pager.CMD``) on and off
_PLAIN_PAGERS: Final = frozenset({"cat", "", "true", "false", "yes", "no", "on", "off", "1", "0"})

#: ``git config``'s options, by what they make it do
_OPTIONS: Final = {
    "read": (
        *("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color"),
        *("--get-colorbool", "--list", "-l"),
    ),
    "unset": ("--unset", "--unset-all", "--remove-section"),
    "valued": ("-f", "--file", "--blob", "--comment", "--default", "--type", "--value", "--url"),
    "flag": (
        *("--global", "--system", "--local", "--worktree", "--includes", "--no-includes"),
        *("--show-origin", "--show-scope", "--name-only", "-z", "--null", "--bool", "--int"),
        *("--bool-or-int", "--path", "--expiry-date", "--no-type", "--fixed-value"),
        *("--all", "--append", "--add", "--replace-all", "--regexp", "-e", "--edit"),
    ),
}
#: the new style's subcommands that store nothing (``edit`` opens the person's editor)
_NOT_SETTING: Final = frozenset({"get", "list", "unset", "remove-section", "edit"})


def sets_command(args: list[str]) -> bool:
    """Whether ``git config ARGS`` may store a setting that runs a command (see the
    module): when unsure, it may."""
    action, operands = _parse(args)
    if action is None and operands[:1] == ["set"]:
        action, operands = _parse(operands[1:])
    elif action is None and operands[:1] and operands[0] in _NOT_SETTING:
        return False
    if action in ("read", "unset"):
        return False
    if action == "unknown":
        return any(not plain_setting(f"{word}=\0") for word in operands)
    return len(operands) > 1 and not plain_setting(f"{operands[0]}={operands[1]}")


def _parse(args: list[str]) -> tuple[str | None, list[str]]:
    """The action ``args``'s options choose (``read``, ``unset``; ``unknown`` for an
    option not known here) or None, and the words after the options."""
    action: str | None = None
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "-":
        text = args[index]
        index += 1
        if text == "--":
            break
        kind = _kind(text)
        if kind == "valued" and "=" not in text and not (text.startswith("-f") and text != "-f"):
            index += 1
        elif kind in ("read", "unset", "unknown"):
            action = kind if action in (None, kind) else "unknown"
    return action, args[index:]


def _kind(text: str) -> str:
    """What the option ``text`` of ``git config`` is (``_OPTIONS``), ``unknown`` when
    not known here or ambiguous (long options abbreviated as git takes them)."""
    name = text.split("=", 1)[0]
    if name.startswith("-f") and not name.startswith("--"):
        return "valued"
    exact = {kind for kind, names in _OPTIONS.items() if name in names}
    shortened = {
        kind
        for kind, names in _OPTIONS.items()
        for full in names
        if name.startswith("--") and len(name) > 2 and full.startswith(name)
    }
    kinds = exact or shortened
    return kinds.pop() if len(kinds) == 1 else "unknown"


def plain_setting(setting: str) -> bool:
    """Whether ``NAME=VALUE`` runs nothing: a plain setting, or a pager turned off or
    set to ``cat`` (``-c core.pager=cat``, ``-c pager.log=false``)."""
    name, _, value = setting.partition("=")
    name = name.lower()
    if name == "core.pager" or name.startswith("pager."):
        return value in _PLAIN_PAGERS
    return any(name == p or (p.endswith(".") and name.startswith(p)) for p in _PLAIN_SETTINGS)
