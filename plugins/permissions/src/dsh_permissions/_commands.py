"""Command arguments as subjects: every part of a shell command line.

``_shell.split`` yields the simple commands a line runs. Each becomes a ``command``
subject whose text is its words joined by single spaces, quotes removed, and every
word that looks like a path (``a/b``, ``..``, ``~/x``) replaced by its canonical form
(relative to the workspace when inside it, absolute otherwise). Output redirections
become ``redirect`` subjects (``> path``); input redirections stay in the text.

Commands that run other commands are opened up, and what they run must be allowed
too: the command behind a wrapper (``sudo``, ``env``, ``timeout``, ``xargs``, ...), the
script of ``sh -c`` / ``bash -c`` and ``eval``, and ``find -exec``. Deny and ask rules
also see the text without leading ``NAME=value`` assignments, without wrappers, and
with ``/bin/rm`` shortened to ``rm``, and ``git`` without its global options
(``git -C . push`` is also ``git push``).
"""

from __future__ import annotations

import os
import re
from typing import Final

from dsh_permissions import _xargs
from dsh_permissions._moved import Here, elsewhere_readings, mover, resolve
from dsh_permissions._parallel import PARALLELS, command_words, script
from dsh_permissions._paths import display, folded
from dsh_permissions._readings import SHELLS, open_prefixes, skip_assignments, variants
from dsh_permissions._reads import read_subjects
from dsh_permissions._shell import MAX_DEPTH, Command, Unparseable, Word, split
from dsh_permissions._subjects import Subject
from dsh_permissions._wrappers import (
    MAX_CANDIDATES,
    WRAPPER_ARG,
    WRAPPERS,
    changes_directory,
    moved_at,
    moved_to,
    split_string,
)

__all__ = ["command_subjects"]

#: root, moved (an earlier cd or a wrapper changed the directory), depth, reads, and
#: the directory when it was moved and is known (``_moved``)
_Where = tuple[str, bool, int, bool | None, str | None]

_HARMLESS: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_SHORT_C: Final = re.compile(r"-[A-Za-z]*c[A-Za-z]*")
_SHORT_S: Final = re.compile(r"-[A-Za-z]*s[A-Za-z]*")
_EXEC: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_SHOWN: Final = 200
_CROWDED: Final = f"more than {MAX_CANDIDATES} words behind a wrapper may be the command it runs"


def command_subjects(
    line: str,
    root: str,
    depth: int = 0,
    reads: bool | None = None,
    *,
    moved: bool = False,
    here: str | None = None,
) -> list[Subject]:
    """The subjects of one command argument; a line that cannot be split is one
    subject with a ``problem`` (asked about, never allowed). ``reads``: find the files
    each command reads (``_reads``; None: do not; True: and the symlinks below a
    directory it reads too). ``moved``: the line runs in another directory than the
    workspace root; ``here``: that directory, when it is known."""
    if depth > MAX_DEPTH:
        return [_problem(line, f"commands are nested more than {MAX_DEPTH} levels deep")]
    try:
        commands = split(line)
    except Unparseable as exc:
        return [_problem(line, f"the command cannot be checked safely: {exc}")]
    if not commands:  # empty, or only comments: checked like a command with no words
        return [Subject("command", "", allow=("",), deny=("",))]
    subjects: list[Subject] = []
    # moved: after cd, relative paths may name other files than they seem to; here:
    # where the shell is then, as far as it is known (``_moved``)
    now = Here(here if moved else os.path.realpath(root))
    for command in commands:
        subjects.extend(_command(command, root, moved, depth, reads, here=now.path))
        moved = moved or mover([w.text for w in command.words]) is not None
        now = now.after(command.words)
    return subjects


def _problem(line: str, why: str) -> Subject:
    shown = line if len(line) <= _SHOWN else line[:_SHOWN] + "…"
    return Subject("command", shown, problem=why)


def _command(
    command: Command,
    root: str,
    moved: bool,
    depth: int,
    reads: bool | None,
    hole: str | None = None,
    *,
    here: str | None = None,
) -> list[Subject]:
    """``here``: the directory the command runs in when an earlier cd moved it and it
    is known."""
    canon: list[str] = []
    raw: list[str] = []
    unknown: str | None = None
    # behind env -C dir (sudo -D dir, parallel --wd dir) a relative path is another file
    elsewhere = moved_at([w.text for w in command.words])
    for index, word in enumerate(command.words):
        chdir = elsewhere is not None and index >= elsewhere
        text, why = _canonical(word, root, moved, chdir=chdir)
        canon.append(text)
        raw.append(word.text)
        unknown = unknown or why
    redirects: list[Subject] = []
    for redirect in command.redirects:
        if redirect.kind == "dup":
            continue
        if redirect.kind == ">":
            if (subject := _redirect(redirect.target, root, moved)) is not None:
                redirects.append(subject)
            continue
        if redirect.kind == "<":
            text, why = _canonical(redirect.target, root, moved, path=True)
        else:
            text, why = redirect.target.text, _unknown(redirect.target)
        canon += [redirect.kind, text]
        raw += [redirect.kind, redirect.target.text]
        unknown = unknown or why
    subjects: list[Subject] = []
    if canon:
        found = _reads(command, root, moved, reads)
        there = _elsewhere(command, canon, root, here if moved else os.path.realpath(root))
        subjects.append(_text_subject(canon, raw, unknown, found, hole, there))
        inner_moved, inner_here = _inner(command, root, moved, here)
        where = (root, inner_moved, depth, reads, inner_here)
        subjects.extend(_wrapped(command, canon, raw, unknown, where))
    return subjects + redirects


def _inner(command: Command, root: str, moved: bool, here: str | None) -> tuple[bool, str | None]:
    """Whether what the command runs in turn (a shell's script, eval's words) runs in
    another directory, and which when it is known (behind ``env -C dir``: that one)."""
    chdir = moved_to([w.text for w in command.words])
    if chdir is None:
        return moved, here if moved else None
    return True, resolve(here if moved else os.path.realpath(root), chdir[1])


def _elsewhere(command: Command, canon: list[str], root: str, here: str | None) -> list[str]:
    """The command's text as read in the directory an earlier cd or a wrapper's option
    moved it to (``_moved``); none when it was not moved or where to is not known."""
    words = command.words
    start = 0
    chdir = moved_to([w.text for w in words])
    if chdir is not None:
        start, directory = chdir
        here = resolve(here, directory)
    if here is None or (chdir is None and here == os.path.realpath(root)):
        return []
    return elsewhere_readings(words, canon, start, here, root)


def _text_subject(
    canon: list[str],
    raw: list[str],
    unknown: str | None,
    reads: tuple[Subject, ...] = (),
    hole: str | None = None,
    elsewhere: list[str] | None = None,
) -> Subject:
    """``elsewhere``: more spellings deny and ask rules see (``_moved``)."""
    text = " ".join(canon)
    readings = [*variants(canon), *variants(raw), *(elsewhere or ())]
    if None in readings:  # too many words behind a wrapper could be its command
        unknown = unknown or _CROWDED
    deny = tuple(dict.fromkeys([*(r for r in readings if r is not None)]))
    deny = tuple(dict.fromkeys([*deny, *(folded(r) for r in deny)]))
    # only a pattern's first characters tell (see _xargs.OPEN_CHARS)
    prefixes = dict.fromkeys(
        p[: _xargs.OPEN_CHARS] for p in [*open_prefixes(canon, hole), *open_prefixes(raw, hole)]
    )
    prefixes.update(dict.fromkeys(folded(p) for p in list(prefixes)))
    allow = () if unknown else (text,)
    return Subject(
        "command", text, allow=allow, deny=deny, unknown=unknown, reads=reads, open=tuple(prefixes)
    )


def _reads(command: Command, root: str, moved: bool, reads: bool | None) -> tuple[Subject, ...]:
    """The files ``command`` reads (see ``_reads``), when they are looked for."""
    if reads is None:
        return ()
    start = skip_assignments([w.text for w in command.words])
    return read_subjects(command, start, root, moved, reads)


def _wrapped(
    command: Command,
    canon: list[str],
    raw: list[str],
    unknown: str | None,
    where: _Where,
) -> list[Subject]:
    """Subjects for what this command runs in turn (wrappers, shells, eval, find -exec)."""
    words = command.words
    subjects: list[Subject] = []
    index = inner = skip_assignments(raw)
    wrapped = False
    nested = 0
    while index < len(words):
        name = os.path.basename(raw[index])
        if name in WRAPPERS:
            nested += 1
            if nested > MAX_DEPTH:
                line = " ".join(raw)
                subjects.append(_problem(line, f"wrappers are nested more than {MAX_DEPTH} deep"))
                break
            if name == "env" and (split := split_string(raw, index)) is not None:
                subjects.extend(_env_split(words, split, where))
            inner = index + 1
            while inner < len(words) and WRAPPER_ARG.fullmatch(raw[inner]):
                inner += 1
            if inner < len(words):
                why = unknown or _any_unknown(words[inner:])
                subjects.append(_text_subject(canon[inner:], raw[inner:], why))
                if name == "watch":  # runs its words joined, through sh -c
                    subjects.extend(_script(words[inner:], where, "the command watch runs"))
            if name in PARALLELS:
                subjects.extend(_parallel(words, raw, index, where))
            index, wrapped = inner, True
            continue
        if name in SHELLS:
            # the command itself (or right behind a wrapper's options), not a later word
            # that may be an option's value (sudo apt install zsh)
            command_word = not wrapped or index == inner
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


def _parallel(words: tuple[Word, ...], raw: list[str], index: int, where: _Where) -> list[Subject]:
    """What parallel or sem runs (``_parallel``): its command as a shell line, each
    place an argument goes a hole its beginning is cut at (see ``_open``)."""
    root, moved, depth, reads, here = where
    found = command_words(raw, index)
    if found is None or found[0] == found[1]:
        return []  # _open takes the command to be anything
    inner = words[found[0] : found[1]]
    line = script(os.path.basename(raw[index]), [w.text for w in inner])
    if any(w.dynamic for w in inner):
        return [_problem(line, "the command parallel runs is only known when the shell runs it")]
    if depth + 1 > MAX_DEPTH:
        return [_problem(line, f"commands are nested more than {MAX_DEPTH} levels deep")]
    try:
        commands = split(line)
    except Unparseable as exc:
        return [_problem(line, f"the command parallel runs cannot be checked safely: {exc}")]
    if changes_directory(raw, found[0]):  # parallel --wd dir: not followed
        moved, here = True, None
    subjects: list[Subject] = []
    for command in commands:
        found_here = _command(command, root, moved, depth + 1, reads, _xargs.FIND_HOLE, here=here)
        subjects.extend(found_here)
        moved = moved or mover([w.text for w in command.words]) is not None
    return subjects


def _env_split(
    words: tuple[Word, ...], split: tuple[int, int, str], where: _Where
) -> list[Subject]:
    """``env -S 'cat .env'``: the command line with the string split into words, as
    env runs it (its options included: ``env -S '-C dir cat x'``). env reads escapes
    (``\\_`` is a space) and ``${VAR}`` its own way: a string holding either is a
    problem."""
    root, moved, depth, reads, here = where
    first, end, string = split
    line = " ".join([*(w.raw for w in words[:first]), string, *(w.raw for w in words[end:])])
    if any(w.dynamic for w in words[first:end]) or "\\" in string or "$" in string:
        return [_problem(line, "env -S splits a string env reads its own way (escapes, ${VAR})")]
    return command_subjects(line, root, depth + 1, reads, moved=moved, here=here)


def _shell_script(
    shell: tuple[Word, ...], where: _Where, command_word: bool = True
) -> list[Subject]:
    """``sh -c SCRIPT``: the script's commands (wherever the -c option stands). A shell
    run as a command with no ``-c`` and no script file (``curl x | sh``, ``bash <<< '...'``,
    ``bash -s``) runs what its input says: that cannot be checked."""
    args = shell[1:]
    for position, word in enumerate(args):
        if _SHORT_C.fullmatch(word.text):
            rest = [w for w in args[position + 1 :] if not w.text.startswith("-")]
            return _script(tuple(rest[:1]), where, "the -c script")
    options = [w.text for w in args if w.text.startswith("-")]
    reads_input = len(options) == len(args) or any(_SHORT_S.fullmatch(o) for o in options)
    if command_word and reads_input:
        line = " ".join(w.raw for w in shell)
        why = "the shell reads the commands it runs from its input, which cannot be checked"
        return [_problem(line, why)]
    return []


def _script(args: tuple[Word, ...], where: _Where, what: str) -> list[Subject]:
    root, moved, depth, reads, here = where
    if not args:
        return []
    line = " ".join(w.text for w in args)
    if any(w.dynamic for w in args):
        return [_problem(line, f"{what} is only known when the shell runs it")]
    # it runs where the shell is (after cd secrets, sh -c 'cat key' reads secrets/key)
    return command_subjects(line, root, depth + 1, reads, moved=moved, here=here)


def _find_exec(args: tuple[Word, ...], where: _Where) -> list[Subject]:
    root, moved, depth, reads, here = where
    subjects: list[Subject] = []
    index = 0
    while index < len(args):
        if args[index].text in _EXEC:  # quoted or escaped, find still sees -exec
            end = index + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            if end > index + 1:
                inner = Command(args[index + 1 : end])
                # -execdir runs it in the directory of each file found
                execdir = args[index].text.endswith("dir")
                found = _command(
                    inner,
                    root,
                    moved or execdir,
                    depth + 1,
                    reads,
                    _xargs.FIND_HOLE,
                    here=None if execdir else here,
                )
                subjects.extend(found)
            index = end
        index += 1
    return subjects


def _any_unknown(words: tuple[Word, ...]) -> str | None:
    return next((why for w in words if (why := _unknown(w)) is not None), None)


def _unknown(word: Word) -> str | None:
    if word.dynamic:
        return f"{word.raw!r} only gets its value when the shell runs"
    return None


def _path_like(text: str) -> bool:
    if text in (".", ".."):
        return True
    return "/" in text and not text.startswith("-") and "://" not in text and "=" not in text


def _canonical(
    word: Word, root: str, moved: bool, *, path: bool = False, chdir: bool = False
) -> tuple[str, str | None]:
    """How ``word`` is matched, and why its value is unknown (or None). ``chdir``: the
    word follows a wrapper's option that runs the command in another directory."""
    if word.dynamic:
        return word.text, _unknown(word)
    text = word.text
    if word.tilde:
        text = os.path.expanduser("~") + text[1:]
    elif not (path or _path_like(text)):
        return text, None
    if (moved or chdir) and not os.path.isabs(text):
        what = "an earlier cd (or find -execdir)" if moved else "a wrapper's option"
        return word.text, f"{what} changed the directory, so {word.raw!r} may name another file"
    if not text or "\x00" in text:
        return word.text, f"{word.raw!r} is not a usable path"
    return display(os.path.realpath(os.path.join(root, text)), root), None


def _redirect(target: Word, root: str, moved: bool) -> Subject | None:
    if not target.dynamic and target.text in _HARMLESS:
        return None
    text, why = _canonical(target, root, moved, path=True)
    shown = f"> {text}"
    readings = [shown, f"> {target.text}"]
    deny = tuple(dict.fromkeys([*readings, *(folded(r) for r in readings)]))
    return Subject("redirect", shown, allow=() if why else (shown,), deny=deny, unknown=why)
