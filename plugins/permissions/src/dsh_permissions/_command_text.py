"""How a simple command's words are matched: its text, each path-like word in its
canonical form (relative to the workspace when inside it, absolute otherwise), the
spellings deny and ask rules see besides, and its output redirections (``_commands``
puts these together for a whole line)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from typing import Final

from dsh_permissions import _xargs
from dsh_permissions._located import located
from dsh_permissions._paths import display, folded
from dsh_permissions._readings import open_prefixes, script_runs, variants
from dsh_permissions._shell import Word
from dsh_permissions._subjects import Subject
from dsh_permissions._wrapper_grammar import unmodelled
from dsh_permissions._wrappers import MAX_CANDIDATES

__all__ = [
    "any_unknown",
    "canonical",
    "problem",
    "program_text",
    "redirect",
    "shown",
    "text_subject",
    "unknown",
]

_HARMLESS: Final = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_SHOWN: Final = 200
_CROWDED: Final = f"more than {MAX_CANDIDATES} words behind a wrapper may be the command it runs"


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
) -> Subject:
    """The subject of one command's text. ``elsewhere``: more spellings deny and ask
    rules see (``_moved``); each of them also sees the text with its lone ``--`` words
    taken out. ``words``: the shell words of ``canon`` (None: a redirection's operator
    or none known), for the text a person is shown (``shown``)."""
    text = " ".join(canon)
    readings = [*variants(canon), *variants(raw), *(elsewhere or ())]
    # a word that may be the program keeps its ./ (``program_text``); deny rules also
    # see it without, as any other path of the workspace is written
    plain = [w[2:] if w.startswith("./") and len(w) > 2 else w for w in canon]
    if plain != canon:
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
        p[: _xargs.OPEN_CHARS] for p in [*open_prefixes(canon, hole), *open_prefixes(raw, hole)]
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
    program: bool = False,
) -> tuple[str, str | None]:
    """How ``word`` is matched, and why its value is unknown (or None). ``chdir``: the
    word follows a wrapper's option that runs the command in another directory;
    ``program``: the word may be the program the command runs (``program_text``)."""
    if word.dynamic:
        return word.text, unknown(word)
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
    shown = display(os.path.realpath(os.path.join(root, text)), root)
    return (program_text(shown) if program and "/" in text else shown), None


def program_text(shown: str) -> str:
    """How a program given as a path is matched: ``./`` and its path from the
    workspace root when it lies inside (``./gradlew``, ``./scripts/build.sh``), its
    absolute path otherwise. Never its bare name: ``pytest`` is the program the shell
    finds on ``PATH``, ``./pytest`` a file of the workspace, and a rule or an "always"
    answer given for one must not allow the other."""
    return shown if os.path.isabs(shown) else "./" + shown


def redirect(target: Word, root: str, moved: bool, dirs: tuple[str, ...] = ()) -> Subject | None:
    """The subject of an output redirection (``> path``); ``dirs``: where the shell
    may be, when it moved (the target is also read there, for deny and ask rules)."""
    if not target.dynamic and target.text in _HARMLESS:
        return None
    text, why = canonical(target, root, moved, path=True)
    shown = f"> {text}"
    readings = [shown, f"> {target.text}"]
    for directory in dirs if moved else ():
        # a redirection's target is a file, whatever it holds (``> a://b``, ``> -x``)
        if (place := located(target, directory)) is not None:
            readings.extend(f"> {display(p, root)}" for p in place.both())
    deny = tuple(dict.fromkeys([*readings, *(folded(r) for r in readings)]))
    return Subject("redirect", shown, allow=() if why else (shown,), deny=deny, unknown=why)
