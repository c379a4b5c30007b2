"""Options on the wrong side of the command, said with the way out where argparse says
only ``unrecognized arguments``: dsh's own options (``-v``, ``--cwd``, ``-p``, ``-c``,
``-m``, ``--version``) go before the command (``dsh -v run ...``, not ``dsh run -v``),
a command's own options after it (``dsh run --json ...``, not ``dsh --json run``).

Only what argparse left over is looked at after the command: an option the command
takes itself (a plugin command's ``-v``, ``dsh sessions resume -m``), a word after
``--``, the value of an option and prompt text (``dsh run "use -v"``) are taken before
this looks."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from dsh._cli_args import UsageError, shortened, takes_next

__all__ = ["command_option_before", "global_option_after"]

_HELP = ("-h", "--help")  # every parser's own


def global_option_after(extras: list[str], command: str, parser: argparse.ArgumentParser) -> None:
    """Raise UsageError when an argument ``parser`` (dsh's) left over after ``command`` is
    one of dsh's options."""
    for extra in extras:
        if extra == "--":  # what follows is no option
            return
        action = parser._option_string_actions.get(_name(extra))
        if action is None or _name(extra) in _HELP:
            continue
        name = _name(extra)
        value = f" {action.metavar}" if action.nargs is None and action.metavar else ""
        typed = action.nargs != 0 and extra.partition("=")[2]  # --cwd=/tmp, not -v= or -p=
        given = extra if typed else f"{name}{value}"
        what = "dsh's option for the config file" if name in ("-c", "--config") else "dsh's option"
        said = (
            f"{command}: {name} is {what} and goes before the command (dsh {given} {command} ...)"
        )
        if name == "-c" and command in ("run", "chat"):  # llm's -c is --continue
            said += "; to go on with the last session, use --continue"
        raise UsageError(said)
    reason = shortened(extras, parser)  # --conf after the command: dsh's --config?
    if reason is not None:
        raise UsageError(f"{command}: {reason}; dsh's options go before the command")


def command_option_before(
    before: list[str], rest: list[str], parser: argparse.ArgumentParser
) -> None:
    """Raise UsageError when an option in ``before`` (the arguments before the command) is
    not dsh's but an option of the command in ``rest`` (``dsh --json run``), or of the
    command after the word taken for the command (``dsh -s TEXT run``: TEXT is -s's)."""
    ending = rest.index("--") if "--" in rest else len(rest)
    if any(word in _HELP for word in (*before, *rest[:ending])):
        return  # help asked for: argparse prints it, whatever else is given
    commands = dict(_commands(parser))
    words = rest if rest[:1] and rest[0] in commands else rest[1:]
    if not words or words[0] not in commands:
        return  # no command given: argparse says what is wrong
    at = 0
    while at < len(before):
        option = before[at]
        at += 2 if takes_next(option) else 1
        name = _name(option)
        if name in parser._option_string_actions:
            continue
        owners = [path for path, sub in commands.items() if name in sub._option_string_actions]
        given = [path for path in owners if path.split() == words[: len(path.split())]]
        given = given or [path for path in owners if path.split()[0] == words[0]]
        if given:
            named = " and ".join(f"dsh {path}" for path in given)
            raise UsageError(
                f"{name} is an option of {named} and goes after the command "
                f"(dsh {given[0]} {name} ...)"
            )


def _commands(
    parser: argparse.ArgumentParser, path: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command's parser by its words (``run``, ``sessions list``), nested ones too."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for word, sub in action.choices.items():
                words = f"{path} {word}".strip()
                yield words, sub
                yield from _commands(sub, words)


def _name(argument: str) -> str:
    """The option ``argument`` names: ``--cwd`` of ``--cwd=/tmp``, ``-p`` of ``-pno:x``."""
    if argument.startswith("--"):
        return argument.partition("=")[0]
    return argument[:2] if argument.startswith("-") else ""
