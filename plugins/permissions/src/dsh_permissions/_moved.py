"""Where a command may run after a change of directory, and how its words read there.

After ``cd secrets``, ``cat key`` reads ``secrets/key``: a deny or ask rule about
``secrets/*`` must see that. A line is not followed as one path (a ``cd`` may fail,
run in a subshell or in the background, be skipped by ``&&``, or be an external
program behind ``env``): ``Places`` holds every directory the shell may be in. It
starts at the workspace root; each ``cd``/``pushd`` to a known directory (also behind
``eval``; a program naming a directory, ``/etc/``, which fish takes for ``cd /etc``)
adds its target, as resolved from each directory held, both with symlinks
resolved and as the shell's logical ``cd`` reads ``..`` (``cd secrets/door/..`` is
``secrets``). Nothing is ever taken away, so ``cd -``, ``popd`` and a ``cd`` whose
target is not known (``cd "$D"``, ``cd a b``) keep the set as it is. Behind a
wrapper's option that runs its command elsewhere (``env -C dir``, ``sudo -D dir``)
the command's words may be read in the held directories and in ``dir`` from each.

Each later word that may name a file (not an option, an assignment or an absolute
path) is then also read as the file it names in each of those directories, and the
command's text so read is one more spelling deny and ask rules see: never one an
allow rule needs, so it can only make a call stricter. A relative path itself stays
unknown to allow rules (asked about; see ``_command_text.canonical``). At most
``MAX_PLACES`` directories are held; a line that changes the directory more ways is
``lost``, and one with more than ``MAX_LOOKS`` words to read in them is ``CROWDED``
(their later commands are asked about, never allowed by a pattern).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from stat import S_ISLNK
from typing import Final

from dsh_permissions._line_vars import unfollowed
from dsh_permissions._located import Located, located
from dsh_permissions._paths import display
from dsh_permissions._readings import program_names, skip_assignments, starts
from dsh_permissions._shell import MAX_DEPTH, Command, Unparseable, Word
from dsh_permissions._splits import split
from dsh_permissions._wrappers import WRAPPER_ARG, WRAPPERS

__all__ = [
    "CROWDED",
    "LOST",
    "MAX_LOOKS",
    "MAX_PLACES",
    "MOVERS",
    "Places",
    "elsewhere_readings",
    "links_named",
    "mover",
    "program_at",
    "resolve",
    "unknown_place",
]

MOVERS: Final = frozenset({"cd", "pushd", "popd"})
#: how many directories a line may be in, at most, before it is taken as lost
MAX_PLACES: Final = 16
LOST: Final = (
    f"the line changes the directory more ways than are followed ({MAX_PLACES}), "
    "so the files its words name are not known"
)
#: how many words a line may have read in a held directory, at most (each may cost a
#: look at the file system): beyond, its commands are asked about, not read
MAX_LOOKS: Final = 20_000
CROWDED: Final = (
    f"the line has more than {MAX_LOOKS} words to read in the directories it may be "
    "in, so the files they name are not known"
)
_CD_LETTERS: Final = frozenset("LPe@")


@dataclass(slots=True)
class _Budget:
    left: int = MAX_LOOKS


@dataclass(frozen=True, slots=True)
class Places:
    """The absolute directories the shell may be in (the workspace root first; each
    canonical, or as a logical ``cd`` names it), and whether more were left out
    (``lost``)."""

    dirs: tuple[str, ...]
    lost: bool = False
    #: shared by every ``Places`` of one line (see ``charge``)
    budget: _Budget = field(default_factory=_Budget, compare=False)

    def charge(self, words: int) -> bool:
        """Take ``words`` read in each held directory from the line's budget; False
        when it is spent (the command is then not read there, but asked about)."""
        self.budget.left -= words * len(self.dirs)
        return self.budget.left >= 0

    @classmethod
    def at(cls, root: str) -> Places:
        return cls((os.path.realpath(root),))

    def to(self, directory: str | None) -> Places:
        """These places and ``directory`` as named from each (None: not known)."""
        if directory is None:
            return self
        found = dict.fromkeys(self.dirs)
        for base in self.dirs:
            for logical in (False, True):
                if (target := resolve(base, directory, logical=logical)) is not None:
                    found[target] = None
        if len(found) > MAX_PLACES:
            return Places(self.dirs, True, self.budget)
        return Places(tuple(found), self.lost, self.budget)

    def after(self, words: Sequence[Word], depth: int = 0) -> Places:
        """The places the shell may be in after the simple command ``words``."""
        if mover([w.text for w in words]) is None:
            if (named := _implicit(words, self.dirs)) is not None:
                return self.to(named)  # fish's /etc/: cd /etc
            return self._eval(words, depth)
        found = _operands(words)
        if found is None or unfollowed(*found) is not None:
            return self  # cd "$D", HOME=x; cd: not followed (the cd itself is asked about)
        name, rest = found
        if name == "cd" and not rest:
            return self.to(os.path.expanduser("~"))
        if len(rest) != 1 or rest[0] == "-" or rest[0].startswith("+"):
            return self  # cd -, pushd +1, cd a b: back to a held one, or an error
        return self.to(rest[0])

    def then(self, words: Sequence[Word], moved: bool) -> tuple[Places, bool]:
        """The places after the simple command ``words`` (``after``), and whether the
        shell may be in another directory by then (``moved``: before it; a ``cd`` that
        is not followed counts, also behind ``eval``)."""
        after = self.after(words)
        return after, moved or after != self or _moves(words)

    def _eval(self, words: Sequence[Word], depth: int) -> Places:
        """``eval cd secrets`` changes the shell's directory too."""
        places = self
        for command in _evaluated(words, depth):
            places = places.after(command.words, depth + 1)
        return places


def _moves(words: Sequence[Word], depth: int = 0) -> bool:
    """Whether ``words`` may change the directory: a ``cd`` (``pushd``, ``popd``), also
    behind ``eval``."""
    if mover([w.text for w in words]) is not None:
        return True
    return any(_moves(command.words, depth + 1) for command in _evaluated(words, depth))


def _evaluated(words: Sequence[Word], depth: int) -> list[Command]:
    """The commands ``eval`` runs when ``words`` is one and they are known (one not
    known is a problem of its own)."""
    texts = [w.text for w in words]
    index = program_at(texts)
    if index is None or texts[index] != "eval" or depth > MAX_DEPTH:
        return []
    args = words[index + 1 :]
    if any(w.dynamic for w in args):
        return []
    try:
        return split(" ".join(w.text for w in args))
    except Unparseable:
        return []


def _implicit(words: Sequence[Word], dirs: Sequence[str]) -> str | None:
    """The directory a command goes to when its program names one: fish runs ``cd`` for
    a word holding a ``/`` (``/etc/``, ``a/``, ``~/x``) or ``..`` (bash's and zsh's
    autocd, for any name in an interactive shell, is a problem: ``_shell_options``).
    Taken so also when it names nothing yet (``mkdir a; a/``), not when it names a
    file, which runs, from every place held (``./gradlew``)."""
    start = skip_assignments([w.text for w in words])
    if start >= len(words) or words[start].dynamic:
        return None
    word = words[start]
    text = os.path.expanduser(word.text) if word.tilde else word.text
    if "/" not in text and text not in (".", ".."):
        return None
    if all(os.path.isfile(os.path.join(d, text)) for d in dirs):
        return None
    return text


def program_at(words: list[str]) -> int | None:
    """The index of the word that is the program, behind assignments and wrappers."""
    index = skip_assignments(words)
    while index < len(words) and (
        os.path.basename(words[index]) in WRAPPERS or WRAPPER_ARG.fullmatch(words[index])
    ):
        index += 1
    return index if index < len(words) else None


def unknown_place(words: Sequence[Word]) -> str | None:
    """Why the directory the ``cd`` of ``words`` goes to is not known because the line
    may have set where it reads it (``_line_vars``), or None."""
    found = _operands(words)
    return None if found is None else unfollowed(*found)


def _operands(words: Sequence[Word]) -> tuple[str, list[str]] | None:
    """The ``cd`` (``pushd``) of ``words`` and its operands, when it goes to a
    directory that may be told (not ``popd``, ``cd "$D"`` or an option cd does not
    know, with which it fails)."""
    texts = [w.text for w in words]
    index = mover(texts)
    if index is None:
        return None
    name, args = texts[index], words[index + 1 :]
    if any(w.dynamic for w in args) or name == "popd":
        return None
    rest = [w.text for w in args]
    while rest and rest[0] != "-" and rest[0].startswith("-") and rest[0] != "--":
        if name == "cd" and not set(rest[0][1:]) <= _CD_LETTERS:
            return None
        rest = rest[1:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    return name, rest


def mover(words: list[str]) -> int | None:
    """The index of ``cd`` (``pushd``, ``popd``) when the command may change the
    directory, also behind ``builtin`` or ``command`` (and any other wrapper and its
    options); None when it does not."""
    index = program_at(words)
    return index if index is not None and words[index] in MOVERS else None


def resolve(base: str | None, directory: str | None, *, logical: bool = False) -> str | None:
    """The canonical directory ``directory`` names from ``base`` (None: not known);
    ``logical``: the absolute path with ``..`` taken off as written, links kept, as
    ``cd`` without ``-P`` reads it."""
    if directory is None or not directory or "\x00" in directory:
        return None
    directory = os.path.expanduser(directory) if directory.startswith("~") else directory
    if not os.path.isabs(directory) and base is None:
        return None
    joined = os.path.join(base or os.sep, directory)
    # the logical one keeps the links on its way (a later ``cd ..`` goes back over them)
    return os.path.normpath(joined) if logical else os.path.realpath(joined)


def elsewhere_readings(
    words: Sequence[Word | None], canon: list[str], start: int, dirs: Iterable[str], root: str
) -> list[str]:
    """The command's text with each word from ``start`` on that may name a file read
    as the file it names in each of ``dirs`` (``words`` lines up with ``canon``; None:
    not a word, such as a redirection's operator): from each word that may be the
    program, which is kept as written (``cat key`` in ``secrets`` is ``cat secrets/key``)."""
    out: dict[str, None] = {}
    for directory in dirs:
        places = {
            index: place
            for index in range(start, len(words))
            if (word := words[index]) is not None and (place := _file_word(word, directory))
        }
        for real in (True, False):
            located = list(canon)
            for index, place in places.items():
                located[index] = display(place.real if real else place.lexical, root)
            for index in starts(canon):
                if index >= len(canon):
                    continue
                rest = located[index + 1 :]
                out.update(dict.fromkeys(" ".join([n, *rest]) for n in program_names(canon[index])))
    return list(out)


def links_named(words: Sequence[Word | None], start: int, root: str) -> bool:
    """Whether a bare word after ``start`` (a name with no ``/`` that may name a file;
    ``start`` is the program's) names a symlink in ``root``: ``cat pw`` reads
    ``/etc/passwd`` when ``pw`` leads there, and ``elsewhere_readings`` from ``root``
    then says so. A word with a ``/`` is resolved already
    (``_command_text.canonical``); a bare one costs a single ``lstat``."""
    prefix = root.rstrip(os.sep) + os.sep
    for word in words[start + 1 :]:
        if word is None or word.dynamic or word.tilde:
            continue
        text = word.text
        if "/" in text or text in ("", ".", "..") or text[0] == "-" or "=" in text:
            continue
        try:
            if S_ISLNK(os.lstat(prefix + text).st_mode):
                return True
        except (OSError, ValueError):  # no such file, or a NUL byte in the name
            continue
    return False


def _file_word(word: Word, directory: str) -> Located | None:
    """The file a word of a command's text names in ``directory``, when it may name
    one: not an option, an assignment, a URL or an empty word (kept as written)."""
    text = word.text
    if not text or text.startswith("-") or "=" in text or "://" in text:
        return None
    return located(word, directory)
