"""How a simple command's words are matched: its text, each path-like word in its
canonical form (relative to the workspace when inside it, absolute otherwise; a
program given as a symbolic link of the workspace as written, ``program_paths``), the
spellings deny and ask rules see besides, and its output redirections (``_commands``
puts these together for a whole line)."""

from __future__ import annotations

import errno
import os
import shlex
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from dsh_permissions import _xargs
from dsh_permissions._file_words import own_name, own_why, per_process, stream
from dsh_permissions._located import located
from dsh_permissions._paths import display, folded
from dsh_permissions._readings import open_prefixes, script_runs, starts, variants
from dsh_permissions._relinked import leads_elsewhere, relinked
from dsh_permissions._shell import Word
from dsh_permissions._subjects import Subject
from dsh_permissions._wrapper_grammar import unmodelled
from dsh_permissions._wrappers import MAX_CANDIDATES

__all__ = [
    "any_command",
    "any_unknown",
    "canonical",
    "matched_words",
    "problem",
    "program_text",
    "redirect",
    "shown",
    "text_subject",
    "unknown",
]

_HARMLESS: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_SHOWN: Final = 200
#: symbolic links followed from a program's path to its target
_HOPS: Final = 40
#: what reading a path that is not a symbolic link (or is not there) fails with
_NOT_A_LINK: Final = frozenset({errno.EINVAL, errno.ENOENT, errno.ENOTDIR})
_CROWDED: Final = f"more than {MAX_CANDIDATES} words behind a wrapper may be the command it runs"
_ANY_COMMAND: Final = (
    "what it runs may be any command, reading any file (an option not known here, or a "
    "command its arguments or its input give)"
)


def problem(line: str, why: str) -> Subject:
    """A command that cannot be checked (asked about, never allowed)."""
    shown = line if len(line) <= _SHOWN else line[:_SHOWN] + "…"
    return Subject("command", shown, problem=why)


def text_subject(
    canon: list[str],
    raw: list[str],
    why: str | None,
    reads: tuple[Subject, ...] = (),
    hole: str | None = None,
    elsewhere: list[str] | None = None,
    words: Sequence[Word | None] = (),
    linked: Sequence[tuple[int, str]] = (),
) -> Subject:
    """The subject of one command's text. ``elsewhere``: more spellings deny and ask
    rules see (``_moved``); each of them also sees the text with its lone ``--`` words
    taken out. ``words``: the shell words of ``canon`` (None: a redirection's operator
    or none known), for the text a person is shown (``shown``). ``linked``: where a
    program given as a symbolic link stands in ``canon`` and another path deny and ask
    rules see it as (``matched_words``)."""
    text = " ".join(canon)
    readings = [*variants(raw), *(elsewhere or ())]
    for spelt in (canon, *([*canon[:i], other, *canon[i + 1 :]] for i, other in linked)):
        readings += variants(spelt)
        # a word that may be the program keeps its ./ (``program_text``); deny rules
        # also see it without, as any other path of the workspace is written
        plain = [w[2:] if w.startswith("./") and len(w) > 2 else w for w in spelt]
        if plain != spelt:
            readings += variants(plain)
    # bash deploy.sh, . ./deploy.sh, PATH=. deploy.sh: also ./deploy.sh (for deny rules)
    readings += [run for r in list(readings) if r is not None for run in script_runs(r)]
    if None in readings:  # too many words behind a wrapper could be its command
        why = why or _CROWDED
    why = why or unmodelled(raw)  # a wrapper's syntax hides what it runs
    deny = tuple(dict.fromkeys([*(r for r in readings if r is not None)]))
    deny = tuple(dict.fromkeys([*deny, *(r for r in map(_without_end_of_options, deny) if r)]))
    deny = tuple(dict.fromkeys([*deny, *(folded(r) for r in deny)]))
    # only a pattern's first characters tell (see _xargs.OPEN_CHARS)
    prefixes = dict.fromkeys(
        p[: _xargs.OPEN_CHARS]
        for p in [*open_prefixes(canon, hole, raw), *open_prefixes(raw, hole)]
    )
    prefixes.update(dict.fromkeys(folded(p) for p in list(prefixes)))
    allow = () if why else (text,)
    return Subject(
        "command",
        shown(canon, words),
        allow=allow,
        deny=deny,
        unknown=why,
        reads=reads,
        open=tuple(prefixes),
    )


def any_command(subject: Subject) -> Subject:
    """``subject`` with a file read that cannot be checked when it may become any
    command (the beginning ``""`` among its ``open`` ones: an option not known of a
    program that runs commands, parallel given no command, code run with xargs's or
    find's words): such a command may read any file, so the ``read`` tool's deny and
    ask rules are held against it as against ``cat $F``."""
    if "" not in subject.open:
        return subject
    anything = Subject("path", subject.value, unknown=_ANY_COMMAND)
    return replace(subject, reads=(*subject.reads, anything))


def shown(canon: list[str], words: Sequence[Word | None]) -> str:
    """The command as a person approving it must read it, quoted as the shell would
    take it (``echo 'a; rm -rf b'``, not ``echo a; rm -rf b``, which rules match): a
    word whose value the shell makes (``$HOME``, ``*.py``) as written, an operator
    (``<``) as is, any other word quoted where it needs to be. It is also what an
    "always" answer remembers, so two commands never share it."""
    out = []
    for i, text in enumerate(canon):
        word = words[i] if i < len(words) else None
        if word is not None and word.dynamic:
            out.append(word.raw)
        elif word is None and text in ("<", "<<<"):
            out.append(text)
        else:
            out.append(shlex.quote(text))
    return " ".join(out)


def _without_end_of_options(reading: str) -> str | None:
    """``reading`` with each lone ``--`` word taken out (``cat -- secrets/key`` reads
    what ``cat secrets/key`` does), or None when it has none."""
    words = reading.split(" ")
    if "--" not in words:
        return None
    return " ".join(w for w in words if w != "--")


def any_unknown(words: tuple[Word, ...]) -> str | None:
    return next((why for w in words if (why := unknown(w)) is not None), None)


def unknown(word: Word) -> str | None:
    """Why the value of ``word`` is only known when the shell runs (or None)."""
    if word.dynamic:
        return f"{word.raw!r} only gets its value when the shell runs"
    return None


def _path_like(text: str) -> bool:
    if text in (".", ".."):
        return True
    return "/" in text and not text.startswith("-") and "://" not in text and "=" not in text


def canonical(
    word: Word,
    root: str,
    moved: bool,
    *,
    path: bool = False,
    chdir: bool = False,
) -> tuple[str, str | None]:
    """How ``word`` is matched, and why its value is unknown (or None). ``chdir``: the
    word follows a wrapper's option that runs the command in another directory."""
    text, why, settled = _settled(word, moved, path=path, chdir=chdir)
    if settled:
        return text, why
    if stream(os.path.join(root, text)):  # /dev/stdin: the command's, not dsh's
        return text, None
    if per_process(os.path.join(root, text)):  # > /proc/self/cwd/.env: the workspace's
        return text, own_why(word.raw)
    return _resolved(text, root), None


def _program_word(
    word: Word, root: str, moved: bool, *, chdir: bool
) -> tuple[str, str | None, list[str]]:
    """``canonical`` for a word that may be the program: a path is matched as
    ``program_text`` of the first of its ``program_paths``, and the others are the
    texts deny and ask rules also see it as (the chain of links is followed once)."""
    text, why, settled = _settled(word, moved, chdir=chdir)
    if settled:
        return text, why, []
    if "/" not in text:  # . or ..
        return _resolved(text, root), None, []
    if own_name(os.path.join(root, text)):  # /proc/self/exe: the shell running it
        return text, own_why(word.raw), []
    paths, why = program_paths(text, root)
    earlier = relinked() if why is None else None  # ln -s /bin/rm r; ./r -rf x
    if earlier is not None and leads_elsewhere(os.path.join(root, text)):
        why = f"{earlier} earlier in the line, so {word.raw!r} may lead elsewhere"
    return program_text(paths[0]), why, [program_text(p) for p in paths[1:]]


def _settled(
    word: Word, moved: bool, *, path: bool = False, chdir: bool = False
) -> tuple[str, str | None, bool]:
    """The text of ``word`` and why its value is unknown, settled (True) when it is
    matched as that, or (False) the path to resolve: a path-like word whose directory
    is known."""
    if word.dynamic:
        return word.text, unknown(word), True
    text = _expanded(word)
    if not (word.tilde or path or _path_like(text)):
        return text, None, True
    if (moved or chdir) and not os.path.isabs(text):
        what = "an earlier cd (find -execdir, a trap)" if moved else "a wrapper's option"
        why = f"{what} changed the directory, so {word.raw!r} may name another file"
        return word.text, why, True
    if not text or "\x00" in text:
        return word.text, f"{word.raw!r} is not a usable path", True
    return text, None, False


def _resolved(text: str, root: str) -> str:
    return display(os.path.realpath(os.path.join(root, text)), root)


def _expanded(word: Word) -> str:
    """The text of a word that is not dynamic, ``~`` expanded."""
    return os.path.expanduser("~") + word.text[1:] if word.tilde else word.text


def program_paths(text: str, root: str) -> tuple[list[str], str | None]:
    """The paths a program given as the path ``text`` is matched as (shown as
    ``display`` does), and why they are not known (or None): first the one allow rules
    see, then the others deny and ask rules also see. A symbolic link that lies in the
    workspace (its directory resolved inside it, as a venv's ``.venv/bin/python``) is
    matched by allow rules as written: that is the program the person named in the
    rule, and the link's target is not (``allow: bash(python *)`` never allows
    ``.venv/bin/python``). Any other path is matched as its target. Deny and ask rules
    also see, at each link on the way, where it lies (its directory resolved) and the
    path it holds resolved only lexically, from where it lies and from the path the
    chain reached it by (``bin/ok -> /bin/rm`` is also ``/bin/rm`` where ``/bin`` is a
    link to ``usr/bin``), and the target (``/usr/bin/rm``), so a rule about any of
    them covers the program through the link. A chain that cannot be followed to its
    end (too many links, a link that cannot be read) is not known."""
    joined = spelt = os.path.join(root, text)
    target = _resolved(text, root)
    hops: list[str] = []
    held: list[str] = []
    for _ in range(_HOPS):
        where = os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))
        try:
            link = os.readlink(where)
        except OSError as error:
            if error.errno in _NOT_A_LINK:  # not a link (or not there): the target
                break
            why = f"where {text!r} leads cannot be read ({error.strerror})"
            return [target], why
        joined = os.path.join(os.path.dirname(where), link)
        spelt = os.path.normpath(os.path.join(os.path.dirname(spelt), link))
        hops.append(display(where, root))
        held += [display(os.path.normpath(p), root) for p in (joined, spelt)]
    else:
        return [target], f"{text!r} leads through more than {_HOPS} symbolic links"
    first = hops[0] if hops and not os.path.isabs(hops[0]) else target
    return list(dict.fromkeys([first, *hops, *held, target])), None


def matched_words(
    words: Sequence[Word],
    root: str,
    moved: bool,
    elsewhere: int | None,
) -> tuple[list[str], list[str], str | None, list[tuple[int, str]]]:
    """The matched and the raw texts of a simple command's ``words``, why one has no
    known value (or None), and where a program given as a symbolic link stands with
    each other path deny and ask rules see it as (``program_paths``).
    Each word that may be the program keeps its path (``./pytest`` is not ``pytest``).
    ``elsewhere``: where a wrapper's option moving the command to another directory
    starts."""
    texts = [w.text for w in words]
    programs = set(starts(texts)) if "/" in "".join(texts) else set()
    canon: list[str] = []
    raw: list[str] = []
    why_not: str | None = None
    linked: list[tuple[int, str]] = []
    for index, word in enumerate(words):
        chdir = elsewhere is not None and index >= elsewhere
        if index in programs:
            text, why, others = _program_word(word, root, moved, chdir=chdir)
            linked += [(index, other) for other in others]
        else:
            text, why = canonical(word, root, moved, chdir=chdir)
        canon.append(text)
        raw.append(word.text)
        why_not = why_not or why
    return canon, raw, why_not, linked


def program_text(shown: str) -> str:
    """How a program given as a path is matched: ``./`` and its path from the
    workspace root when it lies inside (``./gradlew``, ``./scripts/build.sh``), its
    absolute path otherwise. Never its bare name: ``pytest`` is the program the shell
    finds on ``PATH``, ``./pytest`` a file of the workspace, and a rule or an "always"
    answer given for one must not allow the other."""
    return shown if os.path.isabs(shown) else "./" + shown


def redirect(target: Word, root: str, moved: bool, dirs: tuple[str, ...] = ()) -> Subject | None:
    """The subject of an output redirection (``> path``); ``dirs``: where the shell
    may be, when it moved (the target is also read there, for deny and ask rules).
    Through a link an earlier command of the line may have made, it is not known."""
    if not target.dynamic and target.text in _HARMLESS:
        return None
    text, why = canonical(target, root, moved, path=True)
    earlier = relinked() if why is None else None  # ln -s /etc/passwd w; echo x > w
    if earlier is not None and leads_elsewhere(os.path.join(root, _expanded(target))):
        why = f"{earlier} earlier in the line, so {target.raw!r} may lead elsewhere"
    shown = f"> {text}"
    readings = [shown, f"> {target.text}"]
    for directory in dirs if moved else ():
        # a redirection's target is a file, whatever it holds (``> a://b``, ``> -x``)
        if (place := located(target, directory)) is not None:
            readings.extend(f"> {display(p, root)}" for p in place.both())
    deny = tuple(dict.fromkeys([*readings, *(folded(r) for r in readings)]))
    return Subject("redirect", shown, allow=() if why else (shown,), deny=deny, unknown=why)
