"""Symbolic links a line makes or moves before it reads through them.

A symbolic link's relative target is resolved from wherever the link lies. ``mv``,
``cp -P``/``-a``/``-R`` and ``rsync -a`` keep the target's text and change that place:
``ln -s ../../.env a && mkdir -p x/y && mv a x/y/ && cat x/y/a`` prints ``.env``, and
so does ``mv a x/y/ && cat x/y/a`` once ``a`` exists. A later command of the same line
is checked before the link is there, so a path it reads may lead elsewhere than the
check sees, whether it exists yet or not (``mv`` may put the link over a file).

So within one line (a command argument, with the lines it runs in turn: ``sh -c``,
``find -exec``, ``xargs``), once a command may have made or moved a symbolic link, each
file a later command reads through a place that command writes is unknown (``_reads``):
asked about when a ``read`` deny or ask rule has a pattern. The places are told by
``_destinations`` and a path is walked through them by ``_link_places`` (worked out at
the line's first such read, once); when a place is not known, every later read is. A
command may make or move one when it is ``ln``, ``cp -s`` or ``stow``, unpacks (``tar
x``, ``unzip`` or ``bsdunzip`` but ``unzip -l``, ``7z`` but ``7z l``, ``cpio``,
``dpkg-deb``, ``unsquashfs``, ``unrar`` and the like, ``patch``, a ``git`` command
that may write the work tree: any subcommand but a few that keep it, an alias too), or
is ``mv``/``cp``/``rsync``/``install`` given a source that is a symbolic link now, holds
one below it, is known only when the shell runs (``$F``, ``{}``, names from ``xargs``),
or lies where an earlier command of the line may have put a link (``tar x -C out && mv
out/x y``). ``mv a b && cat b`` of a plain file is not affected, nor a source that does
not exist yet. An existing link that is moved also has its target read from where it
lands (``_made_links.moved_targets``), so ``mv a x/y/`` is denied when ``x/y/a`` would
lead to a denied file. In a line running commands alongside each other (a pipeline,
``&``), a later one may do its part first: the line is checked again once its links
are known (``_commands``, ``line_links``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final

from dsh_permissions._destinations import destinations
from dsh_permissions._git import subcommand
from dsh_permissions._link_places import far, near, reaches
from dsh_permissions._links import links_below
from dsh_permissions._made_links import LINKERS, makes_links
from dsh_permissions._option_variables import TAR_VARIABLES, line_variables, set_for
from dsh_permissions._shell_words import Word
from dsh_permissions._tar import TARS, unpacks
from dsh_permissions._wrappers import WRAPPERS, behind

__all__ = [
    "MOVERS",
    "leads_elsewhere",
    "line_links",
    "one_line",
    "relinked",
    "relinks",
    "set_relinked",
    "sources",
]

#: programs that keep a symbolic link they copy or move (cp and rsync: with options
#: such as -P, -a, -R; taken so whatever their options)
MOVERS: Final = frozenset({"mv", "cp", "rsync", "install", "gmv", "gcp"})
#: programs that rename or hard-link what they are given (a symbolic link too), each
#: operand a possible source
_RENAMERS: Final = frozenset({"link", "rename", "prename", "file-rename", "perl-rename"})
#: programs that make links whatever they are given, or unpack them from an archive
_MAKERS: Final = frozenset(
    {"ln", "gln", "unzip", "bsdunzip", "7z", "7za", "7zr", "cpio", "pax", "patch", "stow", "xstow"}
    # other unpackers that make the links an archive holds
    | {"7zz", "bsdcpio", "dpkg-deb", "unsquashfs", "unrar", "unar", "lha", "lhasa", "xorriso"}
    | {"aunpack", "atool", "dtrx", "patool"}
)
#: what ``unzip``'s leading options and ``7z``'s command are when they only list,
#: test or print an archive (``unzip -l``, ``unzip -Z``, ``7z l``): nothing is unpacked
_UNZIP_READS: Final = frozenset("lvtpZ")
_UNZIP_VALUED: Final = frozenset("Pdx")  # their value is the next word
_SEVEN_ZIP_READS: Final = frozenset({"l", "t"})
#: git subcommands that leave the work tree as it is; any other (an alias, one not
#: known) may write it, and a committed symlink lands there
_GIT_KEEPS: Final = frozenset(
    {"status", "log", "diff", "show", "grep", "blame", "branch", "tag", "fetch"}
    | {"rev-parse", "merge-base", "ls-files", "config", "describe", "shortlog"}
    | {"add", "commit", "push"}
)
#: ``git stash list``, ``git worktree list``: what these list-only forms keep
_GIT_LISTS: Final = {"stash": ("list", "show"), "worktree": ("list",)}
#: ``git checkout -b NAME`` (no start point): a new branch at HEAD, the tree kept
_GIT_CREATES: Final = {"checkout": ("-b", "-B"), "switch": ("-c", "-C", "--create")}


Places = tuple[str, ...]


@dataclass(slots=True)
class _Line:
    #: why a symbolic link may have been made or moved by an earlier command
    why: str | None = None
    #: the absolute places those commands may have put links below
    #: (``_destinations``); None: not known, every later read is unknown
    places: dict[str, None] | None = field(default_factory=dict)
    #: ``places`` as written and resolved (``_link_places.near``), and where the
    #: symlinks below them lead (``far``; None: not known): worked out once, when
    #: first needed
    near: Places | None = None
    far: Places | None = None
    far_known: bool = False


_LINE: ContextVar[_Line | None] = ContextVar("dsh_permissions_line", default=None)


@contextmanager
def one_line() -> Iterator[None]:
    """The commands checked inside are one line: a link one makes counts for the rest
    (nested: the outer line's scope is kept), and so does a variable one sets
    (``_option_variables``)."""
    if _LINE.get() is not None:
        yield
        return
    token = _LINE.set(_Line())
    try:
        with line_variables():
            yield
    finally:
        _LINE.reset(token)


def line_links() -> tuple[str | None, Places | None]:
    """Why a command of this line so far may have made or moved a symbolic link, and
    the places below which (``set_relinked``): what a line adds is told by comparing."""
    line = _LINE.get()
    if line is None:
        return None, ()
    return line.why, None if line.places is None else tuple(line.places)


def relinked() -> str | None:
    """Why an earlier command of this line may have made or moved a symbolic link."""
    line = _LINE.get()
    return None if line is None else line.why


def set_relinked(why: str, places: Places | None) -> None:
    """An earlier command may have made or moved a link below ``places`` (absolute;
    None: not known)."""
    line = _LINE.get()
    if line is None:
        return
    line.why = line.why or why
    if places is None or line.places is None:
        line.places = None
    else:
        line.places.update(dict.fromkeys(places))
        line.near, line.far, line.far_known = None, None, False


def leads_elsewhere(path: str) -> bool:
    """Whether the absolute ``path`` a command reads may go through a link an earlier
    command of this line made or moved (``_link_places``)."""
    line = _LINE.get()
    if line is None or line.why is None:
        return False
    if line.places is None:
        return True
    if line.near is None:
        line.near = near(line.places)
    if reaches(path, line.near):
        return True
    if not line.far_known:  # only now: the walks below the places cost the most
        line.far, line.far_known = far(line.places), True
    return line.far is None or reaches(path, line.far)


def relinks(
    words: tuple[Word, ...], root: str, elsewhere: bool, assigned: bool = False
) -> tuple[str, Places | None] | None:
    """Why the simple command ``words`` (after its assignments; ``assigned``: it has
    some) may make or move a symbolic link, and the absolute places below which it
    may put one (None: not known), or None. ``elsewhere``: it may run in another
    directory than ``root`` (a relative source or place is then not known)."""
    texts = [w.text for w in words]
    if not texts:
        return None
    indices = [0]
    if os.path.basename(texts[0]) in WRAPPERS:
        candidates = behind(texts, 0)
        if candidates is None:
            return f"{texts[0]} runs a command that cannot be told", None
        indices.extend(candidates)
    fed, first = False, None
    places: dict[str, None] | None = {}
    for index in indices:
        name = os.path.basename(texts[index])
        args = words[index + 1 :]
        why = _why(name, args, root, elsewhere, fed)
        if why is not None:
            first = first or why
            # env TAR_OPTIONS=... tar, "$@" fed by xargs, export TAR_OPTIONS=...
            # earlier: options not seen here
            hidden = fed or assigned or any("=" in t for t in texts[1:index])
            hidden = hidden or set_for(TAR_VARIABLES)
            found = None if hidden else _absolute(destinations(name, args), root, elsewhere)
            if found is not None and any(leads_elsewhere(p) for p in found):
                found = None  # ln -s ../src out && tar x -C out: it unpacks into src
            places = None if found is None or places is None else {**places, **found}
        fed = fed or name in ("xargs", "parallel")
    if first is None:
        return None
    return first, None if places is None else tuple(places)


def _absolute(found: Places | None, root: str, elsewhere: bool) -> dict[str, None] | None:
    if found is None:
        return None
    if elsewhere and not all(os.path.isabs(p) for p in found):
        return None  # after cd "$D": a relative place is not known
    return {os.path.join(root, p): None for p in found}


def _why(name: str, args: tuple[Word, ...], root: str, elsewhere: bool, fed: bool) -> str | None:
    texts = [a.text for a in args]
    if _only_reads_archive(name, args):
        return None
    if name in _MAKERS or (name in LINKERS and makes_links(args)):
        return f"{name} may make symbolic links"
    if name in TARS and unpacks(texts):
        return f"{name} may unpack symbolic links"
    if name == "git" and _git_writes(args):
        return "git may write symbolic links to the work tree"
    if name in _RENAMERS:  # link a b, rename FROM TO FILES...: each may be a link
        for word in (a for a in args if not a.text.startswith("-") or a.dynamic):
            if (why := _link_source(word, root, elsewhere)) is not None:
                return f"{name}'s operand {word.raw!r} {why}"
        return None
    if name not in MOVERS:
        return None
    if fed:
        return f"{name} is given names from its input, which may be symbolic links"
    for word in sources(args):
        why = _link_source(word, root, elsewhere)
        if name == "rsync" and ":" in word.text.split(os.sep, 1)[0]:
            why = "is on another host, which may send symbolic links"  # host:dir/
        if why is not None:
            return f"{name}'s source {word.raw!r} {why}"
    return None


def _only_reads_archive(name: str, args: tuple[Word, ...]) -> bool:
    """``unzip -l``/``-v``/``-t``/``-p``/``-Z`` (a leading option; bsdunzip's too) and
    ``7z l``/``t``."""
    if name.startswith("7z"):
        return bool(args) and not args[0].dynamic and args[0].text in _SEVEN_ZIP_READS
    if name not in ("unzip", "bsdunzip"):
        return False
    for word in args:
        text = word.text
        if word.dynamic or not text.startswith("-") or text.startswith("--") or text == "-":
            return False
        for letter in text[1:]:
            if letter in _UNZIP_READS:
                return True
            if letter in _UNZIP_VALUED:  # -P -l: the password is -l, and it unpacks
                return False
    return False


def _git_writes(args: tuple[Word, ...]) -> bool:
    """Whether ``git ARGS`` may write the work tree (fail closed: when not known)."""
    rest = subcommand(["git", *(a.text for a in args)])
    if not rest:
        return False  # git --version: no subcommand runs
    if any(a.dynamic for a in args[len(args) - len(rest) :][:3]):
        return True
    sub, tail = rest[0], [t for t in rest[1:] if t not in ("-q", "--quiet")]
    if sub in _GIT_LISTS:
        return not tail or tail[0] not in _GIT_LISTS[sub]
    if sub in _GIT_CREATES:
        return not (len(tail) == 2 and tail[0] in _GIT_CREATES[sub])
    return sub not in _GIT_KEEPS


def sources(args: tuple[Word, ...]) -> list[Word]:
    """The operands of ``mv``/``cp``/``rsync`` that may be sources: each but the last,
    or each when ``-t DIR`` / ``--target-directory`` names the destination. An option
    not known is taken for a flag (its value for a source: stricter)."""
    operands: list[Word] = []
    named, options = False, True
    for word in args:
        text = word.text
        if options and text == "--":
            options = False
        elif options and text.startswith("-") and len(text) > 1 and not word.dynamic:
            target = text.startswith("--target") or (not text.startswith("--") and "t" in text[1:])
            named = named or target
        else:
            operands.append(word)
    return operands if named else operands[:-1]


def _link_source(word: Word, root: str, elsewhere: bool) -> str | None:
    """Why a source operand may be (or hold) a symbolic link, or None."""
    if word.dynamic or word.tilde or "{}" in word.text:
        return "is known only when the shell runs"
    if elsewhere and not os.path.isabs(word.text):
        return "is named from a directory that is not known"
    path = os.path.join(root, word.text)
    if leads_elsewhere(path):  # tar x -C out && mv out/x y: out/x may be a link now
        return "may be a symbolic link an earlier command made"
    if os.path.islink(path.rstrip(os.sep) or os.sep):
        return "is a symbolic link"
    # A source that does not exist yet (npm run build && cp build/app.js dist/) is not
    # counted: an earlier command of the line that may make it a link (ln -s, cp -s,
    # tar x, unzip, git, a move of a link) has already made the line's reads unknown,
    # and programs not looked into (npm, make) are not tracked.
    if os.path.isdir(path):
        found, why = links_below(os.path.realpath(path))
        if found or why is not None:
            return "holds symbolic links"
    return None
