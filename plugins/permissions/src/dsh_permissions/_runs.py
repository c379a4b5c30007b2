"""What a simple command runs in turn, checked as its own command line (``_commands``).

The command behind a wrapper (``sudo``, ``env``, ``timeout``, ``xargs``, ...), the script
of ``sh -c`` / ``bash -c``, ``env -S``'s string, ``eval`` and ``trap``'s action,
``mapfile -C``'s callback, ``compgen -C``/``-W``, what ``parallel`` runs and ``find
-exec``; and the bash builtins a command uses that the analysis does not model
(``_evaluated``). A line and a command are checked by ``_commands``, which passes its
checks in (``Checks``) so that this module does not import it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final, NamedTuple

from dsh_permissions import _xargs
from dsh_permissions._command_text import any_unknown, problem, text_subject
from dsh_permissions._evaluated import (
    BUILTINS,
    assigned,
    callback,
    completions,
    leading,
    unmodelled,
)
from dsh_permissions._moved import Places
from dsh_permissions._parallel import PARALLELS, command_words, script
from dsh_permissions._readings import SHELLS, skip_assignments
from dsh_permissions._shell import MAX_DEPTH, Command, Unparseable, Word
from dsh_permissions._shell_args import shell_args
from dsh_permissions._shell_input import input_problems
from dsh_permissions._shell_options import unmodelled_option
from dsh_permissions._splits import split
from dsh_permissions._subjects import Subject
from dsh_permissions._traps import pending, then
from dsh_permissions._wrapper_grammar import command_at, may_run, split_string
from dsh_permissions._wrappers import WRAPPERS, changes_directory

__all__ = ["TRAP", "Checks", "Where", "scripted", "wrapped"]

#: root, moved (a cd or a wrapper may have changed the directory), depth, reads, places
Where = tuple[str, bool, int, bool | None, Places]

_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
TRAP: Final = "the command trap runs"


class Checks(NamedTuple):
    """How ``_commands`` checks a command line (``line``) and one simple command
    (``command``, with the hole its beginning is cut at), at the ``Where`` given."""

    line: Callable[[str, Where], list[Subject]]
    command: Callable[[Command, Where, str | None], list[Subject]]


def wrapped(
    checks: Checks,
    command: Command,
    texts: tuple[list[str], list[tuple[int, str]]],
    raw: list[str],
    why_not: str | None,
    where: Where,
) -> list[Subject]:
    """Subjects for what this command runs in turn (wrappers, shells, eval, trap,
    mapfile -C, find -exec), and the bash builtins it uses that the analysis does not
    model (``_evaluated``). ``texts``: the matched words and where a program given as
    a symbolic link stands with its other paths (``matched_words``)."""
    words = command.words
    subjects: list[Subject] = []
    if (why := assigned(leading(words))) is not None:
        subjects.append(problem(" ".join(raw), why))
    if (why := unmodelled_option(words)) is not None:  # set -H, shopt -s autocd
        subjects.append(problem(" ".join(raw), why))
    index = inner = skip_assignments(raw)
    wrapped = False
    runs_at: frozenset[int] | None = frozenset()
    nested = 0
    while index < len(words):
        name = os.path.basename(raw[index])
        if name in BUILTINS:
            subjects.extend(_builtin(checks, name, words[index:], raw[index:], where))
        if name in WRAPPERS:
            nested += 1
            if nested > MAX_DEPTH:
                line = " ".join(raw)
                subjects.append(problem(line, f"wrappers are nested more than {MAX_DEPTH} deep"))
                break
            if name == "env" and (split := split_string(raw, index)) is not None:
                subjects.extend(_env_split(checks, words, split, where))
            inner = command_at(raw, index)  # nice -n 5 rm: rm; machinectl shell HOST rm
            # env NAME=VALUE (and env 'BASH_FUNC_ls%%=...', which it takes for the command)
            if (why := assigned(words[index + 1 : inner + 1])) is not None:
                subjects.append(problem(" ".join(raw), why))
            if inner < len(words):
                why = why_not or any_unknown(words[inner:])
                linked = [(i - inner, t) for i, t in texts[1] if i >= inner]
                spelt = texts[0][inner:]
                subjects.append(
                    text_subject(spelt, raw[inner:], why, linked=linked, words=words[inner:])
                )
                if name == "watch":  # runs its words joined, through sh -c
                    subjects.extend(
                        scripted(checks, words[inner:], where, "the command watch runs")
                    )
            if name in PARALLELS:
                subjects.extend(_parallel(checks, words, raw, index, where))
            # the words that may be the command it runs (sudo -u root bash: bash; a
            # wrapper whose options are not all known: root too)
            found = may_run(raw, index)
            runs_at = None if found is None else frozenset(found)
            index, wrapped = inner, True
            continue
        if name in SHELLS:
            # the command, or a word a wrapper may run (not sudo apt install zsh's zsh)
            command_word = not wrapped or runs_at is None or index in runs_at
            subjects.extend(_shell_script(checks, words[index:], where, command_word))
        elif name == "eval":
            subjects.extend(scripted(checks, words[index + 1 :], where, "eval"))
        elif name == "find":
            subjects.extend(_find_exec(checks, words[index + 1 :], where))
        elif wrapped:
            # Behind a wrapper this word may be the value of one of its options
            # (sudo -u root, timeout -s KILL, exec -a NAME): which options take one is
            # not known here, so the shell, eval or find may come later. Look on.
            index += 1
            continue
        break
    return subjects


def _builtin(
    checks: Checks, name: str, words: tuple[Word, ...], raw: list[str], where: Where
) -> list[Subject]:
    """What the bash builtin ``words[0]`` runs (``trap``'s action, ``mapfile -C``'s
    callback, the input ``source`` reads) and what it does that is not modelled
    (``_evaluated``). Behind a wrapper it may be an option's value: the words after it
    are looked at on."""
    subjects: list[Subject] = []
    if (why := unmodelled(words)) is not None:
        subjects.append(problem(" ".join(raw), why))
    if name == "trap":  # and at the end of the line (_traps)
        subjects.extend(scripted(checks, pending(words[1:], where[1], where[4]), where, TRAP))
    elif name in ("mapfile", "readarray"):
        subjects.extend(_callback(checks, words, where))
    elif name == "compgen":
        commands, word_lists = completions(words[1:])
        for found in commands:
            subjects.extend(scripted(checks, (found,), where, "the command compgen -C runs"))
        for found in word_lists:  # expanded as the shell would: $(...) runs
            subjects.extend(scripted(checks, (found,), where, "the word list compgen -W expands"))
    elif name in ("source", ".") and len(words) > 1:
        subjects.extend(_from_input(words, words[1:], where))
    return subjects


def _parallel(
    checks: Checks, words: tuple[Word, ...], raw: list[str], index: int, where: Where
) -> list[Subject]:
    """What parallel or sem runs (``_parallel``): its command as a shell line, each
    place an argument goes a hole its beginning is cut at (see ``_open``)."""
    root, moved, depth, reads, places = where
    found = command_words(raw, index)
    if found is None or found[0] == found[1]:
        return []  # _open takes the command to be anything
    inner = words[found[0] : found[1]]
    line = script(os.path.basename(raw[index]), [w.text for w in inner])
    if any(w.dynamic for w in inner):
        return [problem(line, "the command parallel runs is only known when the shell runs it")]
    if depth + 1 > MAX_DEPTH:
        return [problem(line, f"commands are nested more than {MAX_DEPTH} levels deep")]
    try:
        commands = split(line)
    except Unparseable as exc:
        return [problem(line, f"the command parallel runs cannot be checked safely: {exc}")]
    if changes_directory(raw, found[0]):  # parallel --wd dir: not followed
        moved = True
    subjects: list[Subject] = []
    for command in commands:
        hole = _xargs.FIND_HOLE
        subjects += checks.command(command, (root, moved, depth + 1, reads, places), hole)
        places, moved = then(places, command.words, moved)
    return subjects


def _env_split(
    checks: Checks, words: tuple[Word, ...], split: tuple[int, int, str], where: Where
) -> list[Subject]:
    """``env -S 'cat .env'``: the command line with the string split into words, as
    env runs it (its options included: ``env -S '-C dir cat x'``). env reads escapes
    (``\\_`` is a space) and ``${VAR}`` its own way: a string holding either is a
    problem."""
    root, moved, depth, reads, places = where
    first, end, string = split
    line = " ".join([*(w.raw for w in words[:first]), string, *(w.raw for w in words[end:])])
    if any(w.dynamic for w in words[first:end]) or "\\" in string or "$" in string:
        return [problem(line, "env -S splits a string env reads its own way (escapes, ${VAR})")]
    return checks.line(line, (root, moved, depth + 1, reads, places))


def _shell_script(
    checks: Checks, shell: tuple[Word, ...], where: Where, command_word: bool = True
) -> list[Subject]:
    """``sh -c SCRIPT``: the script's commands (``_shell_args``). A shell run as a
    command with no ``-c`` and no script file (``curl x | sh``, ``bash <<< '...'``,
    ``bash -s``) runs what its input says: that cannot be checked; nor can a startup
    file (``--rcfile``, ``--init-file``) that is its input, nor arguments the shell
    reads in a way not known."""
    found = shell_args(os.path.basename(shell[0].text), shell[1:])
    if found.why is not None:
        return [problem(" ".join(w.raw for w in shell), found.why)] if command_word else []
    if command_word and found.startup and (read := _from_input(shell, found.startup, where)):
        return read
    inits = [s for w in found.inits for s in scripted(checks, (w,), where, "the fish -C script")]
    if found.command:  # fish and csh: each -c script
        return [
            *inits,
            *(s for w in found.files for s in scripted(checks, (w,), where, "the -c script")),
        ]
    if not command_word:
        return inits
    # bash /dev/stdin, sh -: the script is its input
    return [*inits, *_from_input(shell, () if found.stdin else found.files, where)]


def _from_input(words: tuple[Word, ...], files: tuple[Word, ...], where: Where) -> list[Subject]:
    """``_shell_input.input_problems``, read where the shell may be (after cd too)."""
    root, moved, _, _, places = where
    return input_problems(words, files, (root, *places.dirs) if moved else (root,))


def _callback(checks: Checks, words: tuple[Word, ...], where: Where) -> list[Subject]:
    """``mapfile -C CMD``: CMD is run as a script with the index and each line read
    appended, which are only known when it runs: checked, and a problem."""
    found = callback(words[1:])
    if found is None:
        return []
    line = " ".join(w.raw for w in words)
    why = "mapfile -C runs its callback with the lines it reads appended"
    return [*scripted(checks, found, where, "the mapfile callback"), problem(line, why)]


def scripted(checks: Checks, args: tuple[Word, ...], where: Where, what: str) -> list[Subject]:
    root, moved, depth, reads, places = where
    if not args:
        return []
    line = " ".join(w.text for w in args)
    if any(w.dynamic for w in args):
        return [problem(line, f"{what} is only known when the shell runs it")]
    # it runs where the shell is (after cd secrets, sh -c 'cat key' reads secrets/key)
    return checks.line(line, (root, moved, depth + 1, reads, places))


def _find_exec(checks: Checks, args: tuple[Word, ...], where: Where) -> list[Subject]:
    root, moved, depth, reads, places = where
    subjects: list[Subject] = []
    index = 0
    while index < len(args):
        if args[index].text in _EXEC:  # quoted or escaped, find still sees -exec
            end = index + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            if end > index + 1:  # -execdir runs it in the directory of each file found
                inner = Command(args[index + 1 : end])
                here, hole = moved or args[index].text.endswith("dir"), _xargs.FIND_HOLE
                subjects += checks.command(inner, (root, here, depth + 1, reads, places), hole)
            index = end
        index += 1
    return subjects
