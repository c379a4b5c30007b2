"""Where a command runs after a change of directory, and how its words read there.

After ``cd secrets``, ``cat key`` reads ``secrets/key``: a deny or ask rule about
``secrets/*`` must see that. The directory is followed through a line (``cd``,
``pushd``, ``popd``, ``cd -``, ``cd`` alone; relative to the one before), into a
wrapper that runs its command elsewhere (``env -C dir``, ``sudo -D dir``, parallel's
``--wd dir``) and into what a command runs in turn (``sh -c``, ``eval``; see
``_commands``). Each later bare name (a word without ``/`` that is not an option or
an assignment) is then also read as the file it names there, and the command's text
so read is one more spelling deny and ask rules see: never one an allow rule needs,
so it can only make a call stricter, and a command no rule covers that way
(``cd src && ls``) is decided as before. A directory that cannot be followed
(``cd "$D"``, ``pushd +1``, ``sudo -R``) gives no such spelling. Relative paths
(``./key``) are not read there: after any change of directory they are unknown
(asked about; see ``_commands._canonical``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Final

from dsh_permissions._paths import display
from dsh_permissions._readings import skip_assignments, starts
from dsh_permissions._shell import Word
from dsh_permissions._wrappers import WRAPPER_ARG, WRAPPERS

__all__ = ["MOVERS", "Here", "elsewhere_readings", "mover", "resolve"]

MOVERS: Final = frozenset({"cd", "pushd", "popd"})
_CD_OPTIONS: Final = frozenset({"-L", "-P", "-e", "-@", "-LP", "-PL", "-Pe"})


@dataclass(frozen=True, slots=True)
class Here:
    """The directory the shell is in (canonical absolute; None: not known), the one
    ``cd -`` goes back to and the ``pushd`` stack."""

    path: str | None
    previous: str | None = None
    stack: tuple[str | None, ...] = ()

    def after(self, words: tuple[Word, ...]) -> Here:
        """Where the shell is after the simple command ``words`` (itself when it does
        not change the directory)."""
        index = mover([w.text for w in words])
        if index is None:
            return self
        name, args = words[index].text, list(words[index + 1 :])
        if any(w.dynamic for w in args):
            return replace(self, path=None, previous=self.path)
        texts = [w.text for w in args]
        if name == "cd":
            while texts and texts[0] in _CD_OPTIONS:
                texts = texts[1:]
            if texts and texts[0] == "--":
                texts = texts[1:]
            if not texts:
                return Here(os.path.realpath(os.path.expanduser("~")), self.path, self.stack)
            if texts == ["-"]:
                return Here(self.previous, self.path, self.stack)
            target = resolve(self.path, texts[0]) if len(texts) == 1 else None
            return Here(target, self.path, self.stack)
        if name == "pushd":
            if len(texts) == 1 and not texts[0].startswith(("-", "+")):
                target = resolve(self.path, texts[0])
                return Here(target, self.path, (self.path, *self.stack))
            if not texts and self.stack:  # swaps the top two
                return Here(self.stack[0], self.path, (self.path, *self.stack[1:]))
            return Here(None, self.path, ())
        if not texts and self.stack:  # popd
            return Here(self.stack[0], self.path, self.stack[1:])
        return Here(None, self.path, ())


def mover(words: list[str]) -> int | None:
    """The index of ``cd`` (``pushd``, ``popd``) when the command changes the
    directory, also behind ``builtin`` or ``command`` (and any other wrapper and its
    options); None when it does not."""
    index = skip_assignments(words)
    while index < len(words) and (
        os.path.basename(words[index]) in WRAPPERS or WRAPPER_ARG.fullmatch(words[index])
    ):
        index += 1
    return index if index < len(words) and words[index] in MOVERS else None


def resolve(base: str | None, directory: str | None) -> str | None:
    """The canonical directory ``directory`` names from ``base`` (None: not known)."""
    if directory is None or not directory or "\x00" in directory:
        return None
    directory = os.path.expanduser(directory) if directory.startswith("~") else directory
    if not os.path.isabs(directory) and base is None:
        return None
    return os.path.realpath(os.path.join(base or os.sep, directory))


def elsewhere_readings(
    words: tuple[Word, ...], canon: list[str], start: int, directory: str, root: str
) -> list[str]:
    """The command's text with each word from ``start`` on that may name a file read
    as the file it names in ``directory``: from each word that may be the program,
    which is kept as written (``cat key`` in ``secrets`` is ``cat secrets/key``)."""
    located = list(canon)
    for index in range(start, len(words)):
        if (place := _located(words[index], directory, root)) is not None:
            located[index] = place
    out: list[str] = []
    for index in starts(canon):
        if index >= len(canon):
            continue
        rest = located[index + 1 :]
        out.append(" ".join([canon[index], *rest]))
        base = os.path.basename(canon[index])
        if base and base != canon[index]:
            out.append(" ".join([base, *rest]))
    return out


def _located(word: Word, directory: str, root: str) -> str | None:
    text = word.text
    if word.dynamic or word.tilde or not text or "\x00" in text or os.path.isabs(text):
        return None
    # a relative path (a/b, ./key, ..) stays unknown there (asked about): only a bare
    # name, which _commands matches as written, gets a reading of its own
    if text.startswith("-") or "=" in text or "/" in text or text in (".", ".."):
        return None
    return display(os.path.realpath(os.path.join(directory, text)), root)
