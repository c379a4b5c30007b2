"""Command arguments as subjects: every part of a shell command line.

``_shell.split`` yields the simple commands a line runs. Each becomes a ``command``
subject whose text is its words joined by single spaces, quotes removed, and every word
that looks like a path (``a/b``, ``..``, ``~/x``) replaced by its canonical form
(relative to the workspace when inside it, absolute otherwise; a program given as a path
keeps it, ``./gradlew``; ``_command_text``). Output redirections become ``redirect``
subjects (``> path``); input redirections stay in the text. After a change of directory
each command is also read in every directory the shell may be in (``_moved``).

Commands that run other commands are opened up, and what they run must be allowed too:
the command behind a wrapper (``sudo``, ``env``, ``timeout``, ``xargs``, ...), the
script of ``sh -c`` / ``bash -c``, ``eval`` and ``trap`` (again at the line's end:
``_traps``), ``mapfile -C``'s callback, ``compgen -C``/``-W`` and ``find -exec``; bash
builtins that run a string as code in ways not modelled (array subscripts, ``let``,
``hash -p``, aliases, ``declare -i``) and a script or startup file read from the shell's
input (``source /dev/stdin``, ``bash --rcfile /dev/stdin``) are problems
(``_evaluated``), and so are options that change how later lines are read (history
expansion, ``autocd``: ``_shell_options``). Deny and ask rules also see the text
without leading ``NAME=value`` assignments, without wrappers, with ``/bin/rm``
shortened to ``rm`` (and ``./x`` to ``x``), with a bare name of a symlink read as what
it leads to (``_moved.links_named``), and ``git`` without its global options (``git -C
. push`` is also ``git push``).
"""

from __future__ import annotations

import os
from typing import Final

from dsh_permissions import _xargs
from dsh_permissions._command_text import (
    any_command,
    any_unknown,
    canonical,
    matched_words,
    problem,
    redirect,
    text_subject,
    unknown,
)
from dsh_permissions._evaluated import (
    BUILTINS,
    assigned,
    callback,
    completions,
    leading,
    unmodelled,
)
from dsh_permissions._keyword import as_run
from dsh_permissions._line_vars import noted, switched_home
from dsh_permissions._moved import (
    CROWDED,
    LOST,
    Places,
    elsewhere_readings,
    links_named,
    unknown_place,
)
from dsh_permissions._option_variables import line_variables
from dsh_permissions._parallel import PARALLELS, command_words, script
from dsh_permissions._readings import SHELLS, skip_assignments
from dsh_permissions._reads import command_reads
from dsh_permissions._shell import MAX_DEPTH, Command, Unparseable, Word
from dsh_permissions._shell_args import shell_args
from dsh_permissions._shell_input import input_problems
from dsh_permissions._shell_options import unmodelled_option
from dsh_permissions._splits import one_split, spent, split
from dsh_permissions._subjects import Subject
from dsh_permissions._traps import late, line_traps, pending, then
from dsh_permissions._wrapper_grammar import command_at, may_run, split_string
from dsh_permissions._wrappers import WRAPPERS, changes_directory, moved_at, moved_to

__all__ = ["command_subjects"]

#: root, moved (a cd or a wrapper may have changed the directory), depth, reads, places
_Where = tuple[str, bool, int, bool | None, Places]

_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_TRAP: Final = "the command trap runs"


def command_subjects(
    line: str,
    root: str,
    depth: int = 0,
    reads: bool | None = None,
    *,
    moved: bool = False,
    places: Places | None = None,
) -> list[Subject]:
    """The subjects of one command argument; a line that cannot be split is one
    subject with a ``problem`` (asked about, never allowed). ``reads``: find the files
    each command reads (``_reads``; None: do not; True: and the symlinks below a
    directory it reads too). ``moved``: the line may run in another directory than the
    workspace root; ``places``: the directories it may run in (``_moved``)."""
    if depth > MAX_DEPTH:
        return [problem(line, f"commands are nested more than {MAX_DEPTH} levels deep")]
    with one_split():  # each text eval runs split once (not again at each level)
        try:
            commands = split(line)
        except Unparseable as exc:
            return [problem(line, f"the command cannot be checked safely: {exc}")]
        if not commands:  # empty, or only comments: checked like a command with no words
            return [Subject("command", "", allow=("",), deny=("",))]
        subjects: list[Subject] = []
        now = places or Places.at(root)  # where the shell may be (moved: it may have cd'd)
        with line_variables(), line_traps() as traps:  # HOME=x: for the rest of the line
            for command in commands:
                subjects.extend(_command(command, root, moved, depth, reads, places=now))
                now, moved = then(now, command.words, moved)
            for action in late(traps, moved, now):  # run later: EXIT, DEBUG (_traps)
                subjects.extend(_script(action, (root, moved, depth, reads, now), _TRAP))
        if (why := spent()) is not None:  # a text looked behind may have gone unread
            subjects.append(problem(line, f"the command cannot be checked safely: {why}"))
        return subjects


def _command(
    command: Command,
    root: str,
    moved: bool,
    depth: int,
    reads: bool | None,
    hole: str | None = None,
    *,
    places: Places,
) -> list[Subject]:
    """``places``: the directories the shell may be in (read only when ``moved``).
    With bash's keyword option on, ``git diff A=1`` is also read as ``A=1 git diff``
    (``_keyword``): both readings must pass."""
    readings = (command, *filter(None, (as_run(command),)))
    where = (root, moved, depth, reads, hole)
    return [found for one in readings for found in _reading(one, *where, places=places)]


def _reading(
    command: Command,
    root: str,
    moved: bool,
    depth: int,
    reads: bool | None,
    hole: str | None = None,
    *,
    places: Places,
) -> list[Subject]:
    """The subjects of one reading of a simple command (see ``_command``)."""
    command = noted(command)  # what it sets counts for the rest: HOME=x; cat ~/y
    located: list[Word | None] = list(command.words)
    # behind env -C dir (sudo -D dir, parallel --wd dir) a relative path is another file
    elsewhere = moved_at([w.text for w in command.words])
    canon, raw, why_not, linked = matched_words(command.words, root, moved, elsewhere)
    why_not = why_not or unknown_place(command.words)
    if moved and places.lost:
        why_not = LOST
    redirects: list[Subject] = []
    for found in command.redirects:
        if found.kind == "dup":
            continue
        if found.kind == ">":
            subject = redirect(found.target, root, moved, places.dirs)
            if subject is not None:
                redirects.append(subject)
            continue
        if found.kind == "<":
            text, why = canonical(found.target, root, moved, path=True)
        else:
            text, why = found.target.text, unknown(found.target)
        canon += [found.kind, text]
        raw += [found.kind, found.target.text]
        located += [None, found.target]
        why_not = why_not or why
    subjects: list[Subject] = []
    if canon:
        # where its words are read: where the shell may be, and behind env -C dir
        # also dir from each of those (the held ones too: stricter, never looser)
        start, here = 0, places
        if (chdir_to := moved_to([w.text for w in command.words])) is not None:
            start, here = chdir_to[0], places.to(chdir_to[1])
        there = moved or chdir_to is not None
        dirs = here.dirs if there else ()
        if dirs and not here.charge(len(located)):
            why_not, dirs = why_not or CROWDED, ()  # not read there: asked about
        found_reads = command_reads(command, root, moved, reads, dirs)
        # a bare name of a symlink (cat pw, pw -> /etc/passwd) is read as what it names
        named = dirs or ((root,) if links_named(located, start, root) else ())
        texts = elsewhere_readings(located, canon, start, named, root)
        subject = text_subject(canon, raw, why_not, found_reads, hole, texts, located, linked)
        # one that may run any command may read any file (when reads are looked for)
        subjects.append(subject if reads is None else any_command(subject))
        where = (root, there, depth, reads, here)
        with switched_home(command.words):  # sudo sh -c 'cat ~/x': another user's HOME
            subjects.extend(_wrapped(command, (canon, linked), raw, why_not, where))
    return subjects + redirects


def _wrapped(
    command: Command,
    texts: tuple[list[str], list[tuple[int, str]]],
    raw: list[str],
    why_not: str | None,
    where: _Where,
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
            subjects.extend(_builtin(name, words[index:], raw[index:], where))
        if name in WRAPPERS:
            nested += 1
            if nested > MAX_DEPTH:
                line = " ".join(raw)
                subjects.append(problem(line, f"wrappers are nested more than {MAX_DEPTH} deep"))
                break
            if name == "env" and (split := split_string(raw, index)) is not None:
                subjects.extend(_env_split(words, split, where))
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
                    subjects.extend(_script(words[inner:], where, "the command watch runs"))
            if name in PARALLELS:
                subjects.extend(_parallel(words, raw, index, where))
            # the words that may be the command it runs (sudo -u root bash: bash; a
            # wrapper whose options are not all known: root too)
            found = may_run(raw, index)
            runs_at = None if found is None else frozenset(found)
            index, wrapped = inner, True
            continue
        if name in SHELLS:
            # the command, or a word a wrapper may run (not sudo apt install zsh's zsh)
            command_word = not wrapped or runs_at is None or index in runs_at
            subjects.extend(_shell_script(words[index:], where, command_word))
        elif name == "eval":
            subjects.extend(_script(words[index + 1 :], where, "eval"))
        elif name == "find":
            subjects.extend(_find_exec(words[index + 1 :], where))
        elif wrapped:
            # Behind a wrapper this word may be the value of one of its options
            # (sudo -u root, timeout -s KILL, exec -a NAME): which options take one is
            # not known here, so the shell, eval or find may come later. Look on.
            index += 1
            continue
        break
    return subjects


def _builtin(name: str, words: tuple[Word, ...], raw: list[str], where: _Where) -> list[Subject]:
    """What the bash builtin ``words[0]`` runs (``trap``'s action, ``mapfile -C``'s
    callback, the input ``source`` reads) and what it does that is not modelled
    (``_evaluated``). Behind a wrapper it may be an option's value: the words after it
    are looked at on."""
    subjects: list[Subject] = []
    if (why := unmodelled(words)) is not None:
        subjects.append(problem(" ".join(raw), why))
    if name == "trap":  # and at the end of the line (_traps)
        subjects.extend(_script(pending(words[1:], where[1], where[4]), where, _TRAP))
    elif name in ("mapfile", "readarray"):
        subjects.extend(_callback(words, where))
    elif name == "compgen":
        commands, word_lists = completions(words[1:])
        for found in commands:
            subjects.extend(_script((found,), where, "the command compgen -C runs"))
        for found in word_lists:  # expanded as the shell would: $(...) runs
            subjects.extend(_script((found,), where, "the word list compgen -W expands"))
    elif name in ("source", ".") and len(words) > 1:
        subjects.extend(_from_input(words, words[1:], where))
    return subjects


def _parallel(words: tuple[Word, ...], raw: list[str], index: int, where: _Where) -> list[Subject]:
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
        subjects += _command(command, root, moved, depth + 1, reads, hole, places=places)
        places, moved = then(places, command.words, moved)
    return subjects


def _env_split(
    words: tuple[Word, ...], split: tuple[int, int, str], where: _Where
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
    return command_subjects(line, root, depth + 1, reads, moved=moved, places=places)


def _shell_script(
    shell: tuple[Word, ...], where: _Where, command_word: bool = True
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
    inits = [s for w in found.inits for s in _script((w,), where, "the fish -C script")]
    if found.command:  # fish and csh: each -c script
        return [*inits, *(s for w in found.files for s in _script((w,), where, "the -c script"))]
    if not command_word:
        return inits
    # bash /dev/stdin, sh -: the script is its input
    return [*inits, *_from_input(shell, () if found.stdin else found.files, where)]


def _from_input(words: tuple[Word, ...], files: tuple[Word, ...], where: _Where) -> list[Subject]:
    """``_shell_input.input_problems``, read where the shell may be (after cd too)."""
    root, moved, _, _, places = where
    return input_problems(words, files, (root, *places.dirs) if moved else (root,))


def _callback(words: tuple[Word, ...], where: _Where) -> list[Subject]:
    """``mapfile -C CMD``: CMD is run as a script with the index and each line read
    appended, which are only known when it runs: checked, and a problem."""
    found = callback(words[1:])
    if found is None:
        return []
    line = " ".join(w.raw for w in words)
    why = "mapfile -C runs its callback with the lines it reads appended"
    return [*_script(found, where, "the mapfile callback"), problem(line, why)]


def _script(args: tuple[Word, ...], where: _Where, what: str) -> list[Subject]:
    root, moved, depth, reads, places = where
    if not args:
        return []
    line = " ".join(w.text for w in args)
    if any(w.dynamic for w in args):
        return [problem(line, f"{what} is only known when the shell runs it")]
    # it runs where the shell is (after cd secrets, sh -c 'cat key' reads secrets/key)
    return command_subjects(line, root, depth + 1, reads, moved=moved, places=places)


def _find_exec(args: tuple[Word, ...], where: _Where) -> list[Subject]:
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
                subjects += _command(inner, root, here, depth + 1, reads, hole, places=places)
            index = end
        index += 1
    return subjects
