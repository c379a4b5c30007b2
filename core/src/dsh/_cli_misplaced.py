"""Options on the wrong side of the command, said with the way out where argparse says
only ``unrecognized arguments``: dsh's own options (``-v``, ``--cwd``, ``-p``, ``-c``,
``-m``, ``--version``) go before the command (``dsh -v run ...``, not ``dsh run -v``),
a command's own options after it (``dsh run --json ...``, not ``dsh --json run``), and
under a command with commands of its own, an option of one of them right after its
word (``dsh pc sub --loud``, not ``dsh pc --loud sub``).

Only what argparse left over is looked at after the command: an option the command
takes itself (a plugin command's ``-v``, ``dsh sessions resume -m``), a word after
``--``, the value of an option and prompt text (``dsh run "use -v"``) are taken before
this looks."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from dsh._cli_args import UsageError, shortened, takes_next

__all__ = ["command_option_before", "given_command", "global_option_after"]

_HELP = ("-h", "--help")  # every parser's own


def global_option_after(
    extras: list[str], rest: list[str], parser: argparse.ArgumentParser
) -> None:
    """Raise UsageError when an argument ``parser`` (dsh's) left over after the command
    (``rest``: the words from it on) is one of dsh's options, or of a command the one
    given is under or of that one, written before its word (``dsh pc --loud sub``)."""
    chain = _chain(rest, parser)
    if not chain:  # no command (dsh --version -x): argparse says what is wrong
        return
    command = chain[-1][0]
    for extra in extras:
        if extra == "--":  # what follows is no option
            return
        name = _name(extra)
        action = parser._option_string_actions.get(name)
        owners = [words for words, sub in chain if name in sub._option_string_actions]
        if name in _HELP:
            continue
        if owners:  # the deepest: the one whose word it was written before
            raise UsageError(_before_its_command(extra, command, owners[-1], action))
        if action is None:
            continue
        what = "dsh's option for the config file" if name in ("-c", "--config") else "dsh's option"
        said = (
            f"{command}: {name} is {what} and goes before the command "
            f"(dsh {_given(extra, action)} {command} ...)"
        )
        if name == "-c" and command in ("run", "chat"):  # llm's -c is --continue
            said += "; to go on with the last session, use --continue"
        raise UsageError(said)
    reason = shortened(extras, parser)  # --conf after the command: dsh's --config?
    if reason is not None:
        raise UsageError(f"{command}: {reason}; dsh's options go before the command")


def given_command(rest: list[str], parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The parser of the command given in ``rest`` (the deepest: ``dsh sessions list``'s),
    else ``parser``: its usage is the one an unrecognised argument calls for."""
    chain = _chain(rest, parser)
    return chain[-1][1] if chain else parser


def _before_its_command(
    extra: str, command: str, owner: str, action: argparse.Action | None
) -> str:
    """What is wrong with ``extra``, an option of ``owner`` (``pc``, or ``command``
    itself) written before a word of ``command`` (``pc --loud sub``, ``pc sub --top``);
    ``action``: dsh's option of that name, if any (it may be meant for either)."""
    name = _name(extra)
    said = (
        f"{command}: {name} is an option of dsh {owner} and goes right after it "
        f"(dsh {owner} {name}{command[len(owner) :]} ...)"
    )
    if action is not None:
        given = _given(extra, action)
        said += f"; dsh's {name} goes before the command (dsh {given} {command} ...)"
    return said


def _given(extra: str, action: argparse.Action) -> str:
    """Option ``extra`` of dsh's as it is given before the command: with the value
    typed (``--cwd=/tmp``, not ``-v=`` or ``-p=``), or else the name of one."""
    name = _name(extra)
    if action.nargs != 0 and extra.partition("=")[2]:
        return extra
    return f"{name} {action.metavar}" if action.nargs is None and action.metavar else name


def _chain(
    rest: list[str], parser: argparse.ArgumentParser
) -> list[tuple[str, argparse.ArgumentParser]]:
    """The command given in ``rest`` (dsh's first) and those it is under, each by its
    words and with its parser, the command given last: ``pc``, ``pc sub``."""
    chain: list[tuple[str, argparse.ArgumentParser]] = []
    for word in rest:
        if word == "--":
            break
        under = chain[-1][1] if chain else parser
        for action in under._actions:
            if isinstance(action, argparse._SubParsersAction) and word in action.choices:
                words = f"{chain[-1][0]} {word}" if chain else word
                chain.append((words, action.choices[word]))
                break
    return chain


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
