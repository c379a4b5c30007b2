"""Canonical paths and path patterns.

A path argument is matched as the file it names, not as the text the model wrote:
relative paths are taken from the workspace root, ``..`` segments and symlinks are
resolved (``os.path.realpath``), so ``src/../../etc/passwd`` and a symlink pointing
out of the workspace are seen for what they are. When a value can be read in more
than one way (a Python tool may or may not expand ``~`` or ``$HOME``), every reading is
returned and the caller requires each of them to be allowed. Deny and ask rules also
see each value as written (``path_written``: ``..`` taken away lexically, symlinks not
followed), since only a pattern's literal directory is resolved: ``**/secrets/**``
covers ``secrets/k`` where ``secrets`` is a symlink.

Patterns use the same canonical form: relative patterns are anchored at the workspace
root, ``~`` is the home directory, and the literal directory part of a pattern is
resolved too, once per checked call (``_looked.one_resolution``: so ``/etc/**`` still
matches where ``/etc`` is a symlink, and a symlink made since the last call counts; a
verdict kept between calls is used again only while it resolves the same). Within a
pattern, ``*``, ``?`` and ``[...]`` match inside one path component and ``**`` matches
any number of components, including none (``src/**`` matches ``src`` itself).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final

from dsh_permissions._looked import real
from dsh_permissions._path_braces import alternatives

__all__ = [
    "MAX_PATH",
    "PathPattern",
    "display",
    "inside",
    "path_readings",
    "path_written",
    "pattern_problem",
    "spellings",
    "unencodable",
    "utf8_decoded",
]

#: Longer values are not matched (they are asked about instead).
MAX_PATH: Final = 4096
_GLOB: Final = frozenset("*?[")


def _home() -> str:
    return os.path.realpath(os.path.expanduser("~"))


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be a path pattern, or None. Each problem would make a
    rule quietly match other paths than meant (a deny rule then stops nothing): ``$``
    is not expanded (``$HOME/.gnupg/**`` is a directory named ``$HOME`` in the
    workspace), nor is ``~user``, ``~+`` or ``~-`` (only ``~`` and ``~/``), ``**`` only
    means "any directories" as a whole component (``src/**foo`` acts as ``src/*foo``),
    fnmatch takes an unclosed ``[`` literally, and a backslash as itself (it escapes
    nothing: ``\\.env`` names a file called so). Braces are expanded first
    (``_path_braces``): each alternative is looked at."""
    if "\\" in pattern:
        return (
            "a backslash escapes nothing in a path pattern (it would name a file with a "
            "backslash in its name); write the name without it, and [*], [?] or [[] for "
            "a literal '*', '?' or '['"
        )
    try:
        found = alternatives(pattern)
    except ValueError as exc:
        return str(exc)
    return next((bad for one in found if (bad := _problem(one)) is not None), None)


def _problem(pattern: str) -> str | None:
    """``pattern_problem`` of one alternative of a pattern."""
    if "$" in pattern:
        return (
            "'$' is not expanded in a path pattern (it would name a directory "
            "called so in the workspace); write ~/ for the home directory"
        )
    if pattern.startswith("~") and pattern != "~" and not pattern.startswith("~/"):
        first = pattern.split("/", 1)[0]
        return (
            f"{first!r} is not expanded in a path pattern (it would name a directory "
            "called so in the workspace); write the absolute path, ~/ for your own "
            f"home directory, or ./{first} for a directory of that name in the workspace"
        )
    for part in pattern.split("/"):
        if "**" in part and part != "**":
            return f"'**' must be a whole path component ('src/**/x'), not part of {part!r}"
        if _unclosed(part):
            return f"the '[' in {part!r} is not closed by ']'"
    return None


def _unclosed(part: str) -> bool:
    """Whether a ``[`` in ``part`` has no ``]`` to close it (as fnmatch reads a set: a
    ``!`` or ``]`` right after the ``[`` belongs to the set)."""
    i = 0
    while (i := part.find("[", i)) >= 0:
        j = i + 1
        if part[j : j + 1] == "!":
            j += 1
        if part[j : j + 1] == "]":
            j += 1
        end = part.find("]", j)
        if end < 0:
            return True
        i = end + 1
    return False


def _resolve(value: str, base: str) -> str:
    return os.path.realpath(os.path.join(base, value))


def path_readings(value: str, root: str) -> tuple[str, ...]:
    """Every canonical absolute path ``value`` may name, resolved against ``root``.

    Raises ValueError when the value cannot name a file (empty, NUL byte, too long).
    """
    if not value:
        raise ValueError("the path is empty")
    if "\x00" in value:
        raise ValueError("the path contains a NUL byte")
    if (why := unencodable(value)) is not None:
        raise ValueError(f"the path {why}")
    if len(value) > MAX_PATH:
        raise ValueError(f"the path is longer than {MAX_PATH} characters")
    readings: list[str] = []
    for spelling in spellings(value):
        path = _resolve(spelling, root)
        if path not in readings:
            readings.append(path)
    return tuple(readings)


def path_written(value: str, root: str, readings: tuple[str, ...]) -> tuple[str, ...]:
    """Each spelling of ``value`` (a value ``path_readings`` took) as written: absolute
    from ``root``, ``..`` taken away lexically, symlinks not followed; and each path it
    becomes as its symlinks are followed one at a time (``s/k`` where ``s -> secrets``
    and ``secrets -> vault`` is ``secrets/k`` on the way to ``vault/k``). Deny and ask
    rules see these too (``Subject.deny``): ``**/secrets/**`` covers ``secrets/k`` where
    ``secrets`` leads elsewhere, which only the literal part of a pattern is resolved
    for (stricter only: an allow rule never sees them)."""
    out: dict[str, None] = {}
    for spelling in spellings(value):
        written = os.path.normpath(os.path.join(root, spelling))
        out[written] = None
        if written not in readings:  # a symlink on the way (``readings``: real paths)
            out.update(dict.fromkeys(_link_steps(written)))
    return tuple(out)


#: symlinks followed one at a time at most (as Linux's path lookup)
_MAX_LINKS: Final = 40


def _link_steps(path: str) -> list[str]:
    """What the absolute ``path`` becomes as its first symlink is replaced by where it
    leads (lexically), again and again: each path on the way to its real path."""
    out: list[str] = []
    for _ in range(_MAX_LINKS):
        parts = path.split(os.sep)
        at = next(
            (i for i in range(2, len(parts) + 1) if os.path.islink(os.sep.join(parts[:i]))),
            None,
        )
        if at is None:
            break
        link = os.sep.join(parts[:at])
        try:
            target = os.readlink(link)
        except OSError:
            break
        path = os.path.normpath(os.path.join(os.path.dirname(link), target, *parts[at:]))
        if path in out:
            break
        out.append(path)
    return out


def unencodable(text: str) -> str | None:
    """Why ``text`` cannot be given to the system (a lone surrogate, ``\\ud800``, which
    JSON carries and no file name or command can; ``\\udc80``-``\\udcff`` are the bytes
    ``os.fsencode`` puts back), or None."""
    try:
        os.fsencode(text)
    except UnicodeEncodeError as exc:
        return f"holds U+{ord(text[exc.start]):04X}, which cannot be encoded (a lone surrogate)"
    return None


def utf8_decoded(text: str) -> str:
    """``text`` with the bytes ``os.fsencode`` puts back (``\\udc80``-``\\udcff``) that
    spell UTF-8 decoded: ``caf\\udcc3\\udca9`` names the file ``café`` and is read as it,
    so a rule naming ``café`` sees it. Bytes that spell no character stay as they are, and
    so does a text holding a lone surrogate (``unencodable`` says why)."""
    if not any("\udc80" <= c <= "\udcff" for c in text):
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text


def spellings(value: str) -> tuple[str, ...]:
    """``value`` as written, with ``~`` expanded and with ``$VAR`` expanded: each way a
    tool may read it."""
    found = [value]
    for expanded in (os.path.expanduser(value), os.path.expandvars(value)):
        if expanded != value and expanded not in found:
            found.append(expanded)
    return tuple(found)


def folded(path: str) -> str:
    """The NFKC form of a path: deny rules also see look-alike spellings folded."""
    return unicodedata.normalize("NFKC", path)


def inside(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both canonical)."""
    if root == os.sep:
        return path.startswith(os.sep)
    return path == root or path.startswith(root + os.sep)


def display(path: str, root: str) -> str:
    """How a canonical path is shown and matched in command text: relative to the
    workspace when inside it, absolute otherwise."""
    if path == root:
        return "."
    if inside(path, root):
        return path[len(root.rstrip(os.sep)) + 1 :]
    return path


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A compiled path pattern: its literal directory (absolute, as written) and the
    components after it, ``**`` kept as is.

    Where the literal directory leads is looked up at each call (once per
    ``_looked.one_resolution``), not once: a symlink made, replaced or removed later changes
    what the pattern names. ``matches`` takes
    each form (as written, and as resolved now when a symlink lies on the way): any
    form matching (``every=False``, deny and ask rules) or every form (``every=True``,
    allow rules: a symlink cannot widen them)."""

    source: str
    literal: str
    rest: tuple[str, ...]
    #: the components as written: the literal directory's, then ``rest``
    written: tuple[str, ...]

    @classmethod
    def compile(cls, pattern: str, root: str, *, sets: bool = True) -> PathPattern:
        """``sets=False`` reads ``[`` as itself: ``keys[prod].txt`` names that file."""
        text = pattern
        if text == "~" or text.startswith("~/"):
            text = _home() + text[1:]
        elif not os.path.isabs(text):
            text = os.path.join(root, text)
        parts = text.split(os.sep)
        glob = _GLOB if sets else _GLOB - {"["}
        glob_at = next((i for i, p in enumerate(parts) if glob & set(p)), len(parts))
        literal = os.path.normpath(os.sep.join(parts[:glob_at]) or os.sep)
        rest = tuple(
            p if sets else p.replace("[", "[[]") for p in parts[glob_at:] if p not in ("", ".")
        )
        return cls(pattern, literal, rest, (*_escaped(literal), *rest))

    def forms(self) -> tuple[tuple[str, ...], ...]:
        """The components as written and, when it differs, as the literal directory
        resolves now (``os.path.realpath``, as values are)."""
        resolved = real(self.literal)
        if resolved == self.literal:
            return (self.written,)
        return (self.written, (*_escaped(resolved), *self.rest))

    def matches(self, path: str, every: bool = False) -> bool:
        """Whether the canonical absolute ``path`` matches."""
        parts = _parts(path)
        found = (_matches(form, parts) for form in self.forms())
        return all(found) if every else any(found)

    def matches_below(self, path: str) -> bool:
        """Whether some path strictly beneath the canonical absolute ``path`` could
        match (any form): what a tool given the directory ``path`` may read or change
        inside it."""
        parts = _parts(path)
        return any(_matches_below(form, parts) for form in self.forms())


def _escaped(directory: str) -> tuple[str, ...]:
    """The components of a literal directory as patterns matching just themselves (a
    directory may be named ``[x]`` or ``a*``)."""
    return tuple(re.sub(r"([*?[])", r"[\1]", p) for p in _parts(directory))


def _matches(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    last = True
    for row in _rows(pattern, parts):
        last = row[-1]
    return last


def _matches_below(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    for i, row in enumerate(_rows(pattern, parts)):
        # pattern[:i] matches ``path``; what is left (or a last ``**``) matches more
        if row[-1] and (i < len(pattern) or (i > 0 and pattern[i - 1] == "**")):
            return True
    return False


def _parts(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.split(os.sep) if p)


def _rows(pattern: tuple[str, ...], parts: tuple[str, ...]) -> Iterator[list[bool]]:
    """``reachable`` after 0, 1, ... pattern components: ``reachable[j]`` says that the
    components so far can match ``parts[:j]``. One row per component, so the cost is
    len(pattern) * len(parts) however many ``**`` there are; stops at a dead row."""
    reachable = [True] + [False] * len(parts)
    yield reachable
    for component in pattern:
        if component == "**":
            for j in range(1, len(reachable)):
                reachable[j] = reachable[j] or reachable[j - 1]
        else:
            row = [False] * len(reachable)
            for j in range(1, len(reachable)):
                if reachable[j - 1] and fnmatchcase(parts[j - 1], component):
                    row[j] = True
            reachable = row
        yield reachable
        if not any(reachable):
            return
