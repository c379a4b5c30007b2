"""Finding things: ``ls``, ``glob`` and ``grep``, confined to the workspace (``_paths``).

They change nothing, so their worker threads are abandoned on abort (``glob`` stops at
its next directory, ``grep`` at its next directory or file). Results are sorted by
path, so the same tree always gives the same answer, and capped, with a note saying how
much was left out. ``.git`` directories are skipped (``glob`` searches them when a part
of its pattern is ``.git``); symlinks are listed but never followed out of the roots
(a symlinked directory leading out of them is not entered: nothing below it is listed,
searched or counted), and ``**`` does not descend into symlinked directories
(``_glob``). ``grep`` checks that each directory it reads a file in really is in the
roots, once per directory: another process may swap a directory for a link, or
re-point a link, after the walk checked it (such files are skipped, not counted).

``grep`` matches with the ``regex`` module rather than ``re``: ``re`` holds the GIL for
a whole match, so a pattern that backtracks catastrophically froze the event loop (no
abort, no other agent) for as long as it ran, and nothing could stop it. ``regex``
releases the GIL while it matches (``concurrent=True``) and gives up after a time
limit (``timeout=``); its syntax is mostly ``re``'s (docs/tools.md says how it differs).
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Final

import anyio.from_thread
import anyio.to_thread
from pydantic import Field

from dsh.builtin_tools._glob import glob_paths, is_dir
from dsh.builtin_tools._paths import Roots, real_path, roots_of
from dsh.builtin_tools._regular import file_kind, open_regular
from dsh.builtin_tools._text import SNIFF_BYTES, clip_line, looks_binary, split_lines
from dsh.tools import ToolContext, ToolError, tool

if TYPE_CHECKING:
    import regex

__all__ = [
    "GREP_FILE_SECONDS",
    "MAX_BRACE_PATTERNS",
    "MAX_GLOB_RESULTS",
    "MAX_GREP_CHARS",
    "MAX_GREP_FILE_BYTES",
    "MAX_GREP_MATCHES",
    "MAX_GREP_SLOW_FILES",
    "MAX_LS_ENTRIES",
    "expand_braces",
    "glob",
    "grep",
    "ls",
]

MAX_LS_ENTRIES: Final = 500
MAX_GLOB_RESULTS: Final = 500
MAX_GREP_MATCHES: Final = 200
MAX_GREP_CHARS: Final = 30_000
MAX_GREP_LINE_CHARS: Final = 300
#: grep skips bigger files (and says so).
MAX_GREP_FILE_BYTES: Final = 10_000_000
#: Seconds of matching grep allows a pattern on one file before giving up on it (the
#: ``regex`` module measures it coarsely: it may run up to a few times longer).
GREP_FILE_SECONDS: Final = 2.0
#: grep gives up once the pattern was too slow on this many files (it skips fewer).
MAX_GREP_SLOW_FILES: Final = 5
#: The patterns ``{a,b}`` groups may expand a glob to, at most.
MAX_BRACE_PATTERNS: Final = 1_000
_SPECIAL: Final = "special (pipe, socket, device)"
_BRACES: Final = re.compile(r"\{([^{}]*,[^{}]*)\}")


def expand_braces(pattern: str) -> list[str]:
    """``*.{ts,tsx}`` -> ``["*.ts", "*.tsx"]`` (every group, not nested); more than
    ``MAX_BRACE_PATTERNS`` is a ToolError (``{a,b}`` 20 times is a million)."""
    done: list[str] = []
    todo = [pattern]
    while todo:
        each = todo.pop()
        match = _BRACES.search(each)
        if match is None:
            done.append(each)
            continue
        head, tail = each[: match.start()], each[match.end() :]
        todo.extend(head + alt + tail for alt in reversed(match.group(1).split(",")))
        if len(done) + len(todo) > MAX_BRACE_PATTERNS:
            raise ToolError(
                f"the pattern {pattern!r} has more than {MAX_BRACE_PATTERNS} alternatives "
                "({a,b} groups multiply): search with fewer, or several calls"
            )
    return done


def _directory(target: Path, shown: str) -> None:
    if not target.exists():
        raise ToolError(f"{shown} does not exist")
    if not target.is_dir():
        mode = target.stat().st_mode
        if not stat.S_ISREG(mode):
            raise ToolError(f"{shown} is {file_kind(mode)}, not a directory or a regular file")
        raise ToolError(f"{shown} is a file, not a directory (use read)")


def _ls(target: Path, shown: str) -> str:
    _directory(target, shown)
    with os.scandir(target) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    if not entries:
        return f"({shown} is empty)"
    lines = []
    for entry in entries[:MAX_LS_ENTRIES]:
        name = entry.name + ("/" if is_dir(entry) else "")
        lines.append(f"{name} -> {os.readlink(entry.path)}" if entry.is_symlink() else name)
    if len(entries) > MAX_LS_ENTRIES:
        lines.append(f"[showing {MAX_LS_ENTRIES} of {len(entries)} entries; use glob to narrow]")
    return "\n".join(lines)


@tool(name="ls", path_args=("path",), reads=False)
async def ls(
    path: str = Field(".", description="Directory to list, relative to the workspace."),
    *,
    context: ToolContext,
) -> str:
    """List a directory, sorted by name: directories end with '/', symlinks show their
    target. Shows at most 500 entries."""
    roots = roots_of(context)
    target = roots.resolve(path)
    return await anyio.to_thread.run_sync(_ls, target, roots.show(target), abandon_on_cancel=True)


def _below(pattern: str, given: str | None = None) -> str:
    """``pattern``, which must match only below the directory it is applied to;
    ``given``: the pattern the model gave, when ``pattern`` is one of its alternatives."""
    if pattern.startswith(("/", "~")) or ".." in PurePosixPath(pattern).parts:
        part = "" if given in (None, pattern) else f" (its alternative {pattern!r})"
        raise ToolError(
            f"the pattern {given or pattern!r}{part} must be relative and stay below path; "
            "to search elsewhere, set path"
        )
    return pattern


def _glob(base: Path, shown: str, pattern: str, roots: Roots) -> str:
    if not pattern:
        raise ToolError("the pattern is empty; give one, such as '**/*.py'")
    # each alternative must stay below path: '{..,sub}/*' would reach above it
    alternatives = [_below(expanded, pattern) for expanded in expand_braces(pattern)]
    _directory(base, shown)
    found: set[str] = set()
    for expanded in alternatives:
        skip_git = ".git" not in PurePosixPath(expanded).parts  # not '*.gitkeep', '.github'
        for match in glob_paths(base, expanded, pattern, roots, skip_git=skip_git):
            real = real_path(match)  # None: a symlink loop, which leads nowhere
            if real is not None and not roots.allows(real):
                continue
            found.add(roots.show(match) + ("/" if match.is_dir() else ""))
    if not found:
        return f"no paths match {pattern!r} in {shown}"
    ordered = sorted(found)
    lines = ordered[:MAX_GLOB_RESULTS]
    if len(ordered) > MAX_GLOB_RESULTS:
        lines.append(f"[showing {MAX_GLOB_RESULTS} of {len(ordered)} matches; narrow the pattern]")
    return "\n".join(lines)


@tool(name="glob", path_args=("path",), reads=False)
async def glob(
    pattern: str = Field(
        description="Glob relative to path: '*' within a name, '**' across directories, "
        "'{a,b}' alternatives; e.g. '**/*.py'."
    ),
    path: str = Field(".", description="Directory to search, relative to the workspace."),
    *,
    context: ToolContext,
) -> str:
    """Find files and directories whose path matches a glob pattern. Paths are relative
    to the workspace, sorted; directories end with '/'. Shows at most 500."""
    roots = roots_of(context)
    base = roots.resolve(path)
    return await anyio.to_thread.run_sync(
        _glob, base, roots.show(base), pattern, roots, abandon_on_cancel=True
    )


def _files(
    base: Path, patterns: list[str] | None, roots: Roots, given: str | None = None
) -> Iterator[Path]:
    """The files below ``base`` sorted by path (as ``glob`` sorts them: ``a.txt``
    before ``a/b.txt`` before ``b.txt``), without ``.git`` directories. Without
    ``patterns``, every file, not descending into symlinked directories; with them,
    those whose name matches one without a ``/``, and those whose path below ``base``
    matches one with a ``/`` as ``glob`` matches it (through a symlinked directory into
    the ``roots`` a named part matched; a last ``**`` as ``**/*``: the files below);
    ``given``: the glob they were expanded from."""
    if not base.is_dir():
        yield base
        return
    names = [p for p in patterns or () if "/" not in p]
    found: set[Path] = set()
    for p in patterns or ():
        if "/" in p:
            every_file = p + "/*" if p.endswith("/**") else p  # '**' alone: directories
            for match in glob_paths(
                base, _below(every_file, given), given or p, roots, skip_git=True
            ):
                if not match.is_dir():
                    found.add(match)
    if patterns is None or names:
        for directory, subdirectories, files in os.walk(base):
            anyio.from_thread.check_cancelled()  # an abandoned search stops here
            subdirectories[:] = [d for d in subdirectories if d != ".git"]
            for name in files:
                if patterns is None or any(fnmatchcase(name, p) for p in names):
                    found.add(Path(directory, name))
    yield from sorted(found, key=str)


class _Matches:
    """Matching lines up to the caps, and a count of everything found or skipped."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.full = False
        self.total = 0
        self.searched = 0  # text files matched to their end
        self.slow: list[str] = []  # files the pattern took too long on
        self.skipped = dict.fromkeys(
            ["binary", "too large", "unreadable", "outside the roots", _SPECIAL], 0
        )

    def add(self, line: str) -> None:
        self.total += 1
        if self.full or len(self.lines) >= MAX_GREP_MATCHES:
            return
        if self.size + len(line) + 1 > MAX_GREP_CHARS:
            self.full = True  # later lines would leave a gap in the output
            return
        self.lines.append(line)
        self.size += len(line) + 1

    def notes(self) -> list[str]:
        notes = []
        if self.total > len(self.lines):
            notes.append(
                f"[showing {len(self.lines)} of {self.total} matching lines; "
                "narrow the pattern, path or glob]"
            )
        skipped = [f"{n} {why}" for why, n in self.skipped.items() if n]
        if skipped:
            notes.append(f"[files skipped: {', '.join(skipped)}]")
        if self.slow:
            count = f"{len(self.slow)} file{'s' if len(self.slow) > 1 else ''}"
            notes.append(f"[{count} skipped: too slow for the pattern: {', '.join(self.slow)}]")
        return notes


def _search(path: Path, shown: str, compiled: regex.Pattern[str], matches: _Matches) -> None:
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):  # opening a named pipe would wait for a writer
            matches.skipped[_SPECIAL] += 1
            return
        if status.st_size > MAX_GREP_FILE_BYTES:
            matches.skipped["too large"] += 1
            return
        with open_regular(path, shown) as file:
            data = file.read()
    except ToolError:  # it became a special file since the stat
        matches.skipped[_SPECIAL] += 1
        return
    except OSError:
        matches.skipped["unreadable"] += 1
        return
    if looks_binary(data[:SNIFF_BYTES]):
        matches.skipped["binary"] += 1
        return
    # split on \n only, so line numbers agree with read's and edit's
    lines = split_lines(data.decode("utf-8", "replace"))
    deadline = time.monotonic() + GREP_FILE_SECONDS
    found = []
    for number, text in enumerate(lines, start=1):
        try:
            # concurrent: the GIL is released while it matches, so the event loop runs
            if compiled.search(
                text, concurrent=True, timeout=max(deadline - time.monotonic(), 0.001)
            ):
                found.append(f"{shown}:{number}: {clip_line(text, MAX_GREP_LINE_CHARS)}")
        except TimeoutError:  # skipped whole, said so: no file's matches shown in part
            matches.slow.append(shown)
            return
    matches.searched += 1
    for line in found:
        matches.add(line)


class _Inside:
    """Whether a directory really is in the roots, each resolved once per call. The
    walk checks each symlinked directory before it enters it, but another process (a
    background job) may swap a directory for a link, or re-point a link, after that
    check: the files listed through it could be outside."""

    def __init__(self, roots: Roots) -> None:
        self._roots = roots
        self._known: dict[Path, bool] = {}

    def __call__(self, directory: Path) -> bool:
        if (known := self._known.get(directory)) is None:
            real = real_path(directory)  # None: a symlink loop, in none of them
            known = self._known[directory] = real is not None and self._roots.allows(real)
        return known


def _grep(base: Path, shown: str, pattern: str, glob: str | None, roots: Roots) -> str:
    import regex  # here, in the worker thread: ~15 ms a harness start need not pay

    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise ToolError(f"{pattern!r} is not a valid Python regular expression: {exc}") from None
    if not base.exists():
        raise ToolError(f"{shown} does not exist")
    matches = _Matches()
    inside = _Inside(roots)
    for path in _files(base, expand_braces(glob) if glob else None, roots, glob):
        anyio.from_thread.check_cancelled()  # an abandoned search stops here
        if not inside(path.parent):  # as a directory the walk never entered: not counted
            continue
        if path.is_symlink():
            real = real_path(path)
            if real is None:  # a symlink loop
                matches.skipped["unreadable"] += 1
                continue
            if not roots.allows(real):
                matches.skipped["outside the roots"] += 1
                continue
        _search(path, roots.show(path), compiled, matches)
        if len(matches.slow) >= MAX_GREP_SLOW_FILES:
            break
    if (matches.slow and not matches.searched) or len(matches.slow) >= MAX_GREP_SLOW_FILES:
        raise ToolError(
            f"the pattern {pattern!r} took too long on {', '.join(matches.slow)}: simplify "
            "it (it may backtrack catastrophically, as '(a|aa)+$' does)"
        )
    if not matches.total:
        where = f"{shown} (files matching {glob!r})" if glob else shown
        return "\n".join([f"no matches for {pattern!r} in {where}", *matches.notes()])
    return "\n".join([*matches.lines, *matches.notes()])


@tool(name="grep", path_args=("path",))
async def grep(
    pattern: str = Field(description="Python regular expression; '(?i)' ignores case."),
    path: str = Field(".", description="File or directory to search, relative to the workspace."),
    glob: str | None = Field(
        None,
        description="Only search files whose name (or, with a '/', whose path below path) "
        "matches this glob, e.g. '*.py' or 'src/**/*.{ts,tsx}'.",
    ),
    *,
    context: ToolContext,
) -> str:
    """Search file contents line by line with a regular expression. Prints
    'path:line: text' for each matching line, files sorted by path; shows at most 200
    lines. Skips binary files, files over 10 MB and .git directories."""
    roots = roots_of(context)
    base = roots.resolve(path)
    return await anyio.to_thread.run_sync(
        _grep, base, roots.show(base), pattern, glob, roots, abandon_on_cancel=True
    )
