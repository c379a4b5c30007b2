"""Workspace confinement: every path a file tool touches is resolved here first.

A path is made absolute against the workspace (``~`` expanded), then resolved with
``Path.resolve(strict=False)``, which removes ``..`` and follows every symlink, dangling
ones included; a path through a symlink loop is refused (``real_path``). Only then
is it compared with the allowed roots, so a symlink inside the workspace that points
outside it is refused like the outside path itself.

The allowed roots are the workspace and the agent option ``extra_roots`` (a list of
paths; relative ones are taken from the workspace, ``~`` is expanded).

The check happens before the file is opened; a symlink swapped in between the check
and the open is not caught (tools that must withstand a hostile local process need
an OS sandbox, not a path check).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh._options import core_option_problem
from dsh.tools import ToolError

if TYPE_CHECKING:
    from dsh.tools import ToolContext

__all__ = [
    "BadPathError",
    "OutsideWorkspaceError",
    "Roots",
    "real_path",
    "roots_of",
    "symlink_loop",
]

EXTRA_ROOTS_OPTION = "extra_roots"


class OutsideWorkspaceError(PermissionError):
    """A file tool was asked for a path outside the workspace and the extra roots."""


class BadPathError(ToolError, ValueError):
    """A path that names no file: empty, with a NUL byte, from an unknown ``~user``, or
    through a symlink loop.
    A ``ToolError``, so a tool's result shows its message alone."""


def _expand(raw: str | os.PathLike[str]) -> Path:
    try:
        return Path(raw).expanduser()
    except RuntimeError:  # no such user, or no home directory at all
        prefix = os.fspath(raw).split("/", 1)[0]
        raise BadPathError(
            f"the path {os.fspath(raw)!r} starts with {prefix!r}, a home directory that "
            "cannot be found; give the path without '~'"
        ) from None


def _resolve(raw: str | os.PathLike[str], base: Path) -> Path:
    path = _expand(raw)
    if not path.is_absolute():
        path = base / path
    resolved = real_path(path)
    if resolved is None:
        raise symlink_loop(os.fspath(raw))
    return resolved


def _loops(path: Path) -> bool:
    """Whether the OS finds a symlink loop on the way to ``path`` (``ELOOP``)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def symlink_loop(shown: str) -> BadPathError:
    return BadPathError(f"the path {shown!r} goes through a symlink loop")


def real_path(path: Path) -> Path | None:
    """Where ``path`` leads, symlinks followed; ``None`` for a symlink loop on its way.
    ``Path.resolve`` raises for a loop before Python 3.13 only (3.13 returns the
    looping path), and not for one a later ``..`` steps back out of (``lb/../x``,
    which the OS cannot open): the OS is asked, so every version says the same."""
    try:
        resolved = path.resolve(strict=False)
    except RuntimeError:  # before Python 3.13
        return None
    return None if _loops(path) else resolved


class Roots:
    """The directories a call's file tools may touch: the workspace first."""

    __slots__ = ("extra", "workspace")

    def __init__(self, workspace: Path, extra: Sequence[Path] = ()) -> None:
        self.workspace = workspace.resolve(strict=False)
        self.extra = tuple(_resolve(root, self.workspace) for root in extra)

    def allows(self, resolved: Path) -> bool:
        return any(resolved.is_relative_to(root) for root in (self.workspace, *self.extra))

    def resolve(self, raw: str) -> Path:
        """``raw`` as an absolute, symlink-free path; raises ``OutsideWorkspaceError``
        when it lies outside every root."""
        if not raw.strip():
            raise BadPathError("the path is empty; use '.' for the workspace itself")
        if "\0" in raw:
            raise BadPathError(f"the path {raw!r} holds a NUL byte, which no file name can contain")
        resolved = _resolve(raw, self.workspace)
        if not self.allows(resolved):
            shown = f"{raw!r}" if raw == str(resolved) else f"{raw!r} (resolves to {resolved})"
            extra = f" or the extra roots ({', '.join(map(str, self.extra))})" if self.extra else ""
            raise OutsideWorkspaceError(
                f"{shown} is outside the workspace {self.workspace}{extra}; file tools only "
                f"work inside it (the agent option {EXTRA_ROOTS_OPTION!r} allows more roots)"
            )
        return resolved

    def show(self, path: Path) -> str:
        """How a result names ``path``: relative to the workspace when inside it."""
        if path == self.workspace:
            return "."
        if path.is_relative_to(self.workspace):
            return path.relative_to(self.workspace).as_posix()
        return str(path)


def roots_of(context: ToolContext) -> Roots:
    """The roots for one call: the context's workspace plus the agent's extra roots."""
    options: Any = getattr(context.agent, "options", None)
    extra: Any = options.get(EXTRA_ROOTS_OPTION) if isinstance(options, dict) else None
    if extra is None:
        return Roots(context.workspace)
    # checked as agents.create checks it; named by its kind, never quoted: an item may
    # be a key given in the wrong place, or a megabyte
    problem = core_option_problem({EXTRA_ROOTS_OPTION: extra})
    if problem is not None:
        raise TypeError(f"the agent {problem}")
    return Roots(context.workspace, [Path(item) for item in extra])
