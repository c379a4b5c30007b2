"""Command arguments as subjects: every part of a shell command line.

``_shell.split`` yields the simple commands a line runs. Each becomes a ``command``
subject whose text is its words joined by single spaces, quotes removed, and every word
that looks like a path (``a/b``, ``..``, ``~/x``) replaced by its canonical form
(relative to the workspace when inside it, absolute otherwise; a program given as a path
keeps it, ``./gradlew``; ``_command_text``). Output redirections become ``redirect``
subjects (``> path``); input redirections stay in the text. After a change of directory
each command is also read in every directory the shell may be in (``_moved``).

Commands that run other commands are opened up (``_runs``), and what they run must be
allowed too: the command behind a wrapper (``sudo``, ``env``, ``timeout``, ``xargs``,
...), the script of ``sh -c`` / ``bash -c``, ``eval`` and ``trap`` (again at the end:
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

from typing import Final

from dsh_permissions._command_text import (
    any_command,
    canonical,
    matched_words,
    problem,
    redirect,
    text_subject,
    unknown,
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
from dsh_permissions._reads import command_reads
from dsh_permissions._relinked import line_links, relinked
from dsh_permissions._runs import TRAP, Checks, Where, scripted, wrapped
from dsh_permissions._shell import MAX_DEPTH, Command, Unparseable, Word
from dsh_permissions._splits import one_split, spent, split
from dsh_permissions._subjects import Subject
from dsh_permissions._traps import late, line_traps, then
from dsh_permissions._wrappers import moved_at, moved_to
from dsh_permissions._writes import with_writes, written_files

__all__ = ["command_subjects"]


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
        where = (root, moved, depth, reads, places or Places.at(root))
        before = line_links()
        subjects = _each(commands, where)
        if commands[0].alongside and line_links() != before:
            # a pipeline or & runs its commands together: a link a later one makes may
            # be there before an earlier one writes (echo x > w | ln -s /etc/x w)
            subjects = _each(commands, where)
        if (why := spent()) is not None:  # a text looked behind may have gone unread
            subjects.append(problem(line, f"the command cannot be checked safely: {why}"))
        return subjects


def _each(commands: list[Command], where: Where) -> list[Subject]:
    """The subjects of a line's commands, each where the shell may be by then
    (``places``: moved, it may have cd'd), and of its traps."""
    root, moved, depth, reads, now = where
    subjects: list[Subject] = []
    with line_variables(), line_traps() as traps:  # HOME=x: for the rest of the line
        for command in commands:
            subjects.extend(_command(command, root, moved, depth, reads, places=now))
            now, moved = then(now, command.words, moved)
        for action in late(traps, moved, now):  # run later: EXIT, DEBUG (_traps)
            subjects.extend(scripted(_CHECKS, action, (root, moved, depth, reads, now), TRAP))
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
        # cp x .env, tee .env: also > .env for deny and ask rules (before the reads,
        # which note the links a command makes for the later ones: ln -sf x .env)
        wrote, fed = written_files(command.words)
        writes = [redirect(w, root, there, dirs) for w in wrote]
        links = relinked() is not None  # an earlier command's: cd x; ln -s /etc w; tee w
        found_reads = command_reads(command, root, moved, reads, dirs)
        # a bare name of a symlink (cat pw, pw -> /etc/passwd) is read as what it names
        named = dirs or ((root,) if links_named(located, start, root) else ())
        texts = elsewhere_readings(located, canon, start, named, root)
        subject = text_subject(canon, raw, why_not, found_reads, hole, texts, located, linked)
        kept = [w for w in writes if w is not None]
        subject = with_writes(subject, kept, there, fed, links)
        # one that may run any command may read any file (when reads are looked for)
        subjects.append(subject if reads is None else any_command(subject))
        where = (root, there, depth, reads, here)
        with switched_home(command.words):  # sudo sh -c 'cat ~/x': another user's HOME
            subjects.extend(wrapped(_CHECKS, command, (canon, linked), raw, why_not, where))
    return subjects + redirects


def _line(line: str, where: Where) -> list[Subject]:
    root, moved, depth, reads, places = where
    return command_subjects(line, root, depth, reads, moved=moved, places=places)


def _one(command: Command, where: Where, hole: str | None) -> list[Subject]:
    root, moved, depth, reads, places = where
    return _command(command, root, moved, depth, reads, hole, places=places)


#: what a command runs in turn is checked as these check it (``_runs``)
_CHECKS: Final = Checks(_line, _one)
