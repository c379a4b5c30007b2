"""Workspace confinement: every path a file tool touches is resolved here first.

A path is made absolute against the workspace (``~`` expanded), then resolved with
``Path.resolve(strict=False)``, which removes ``..`` and follows every symlink, dangling
ones included. Only then is it compared with the allowed roots, so a symlink inside
the workspace that points outside it is refused like the outside path itself.

The allowed roots are the workspace and the agent option ``extra_roots`` (a list of
paths; relative ones are taken from the workspace, ``~`` is expanded).

The check happens before the file is opened; a symlink swapped in between the check
and the open is not caught (tools that must withstand a hostile local process need
an OS sandbox, not a path check).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh._options import core_option_problem

if TYPE_CHECKING:
    from dsh.tools import ToolContext

__all__ = ["OutsideWorkspaceError", "Roots", "roots_of"]

EXTRA_ROOTS_OPTION = "extra_roots"


class OutsideWorkspaceError(PermissionError):
    """A file tool was asked for a path outside the workspace and the extra roots."""


def _resolve(raw: str | os.PathLike[str], base: Path) -> Path:
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = base / path
    return path.resolve(strict=False)


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
            raise ValueError("the path is empty; use '.' for the workspace itself")
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
    if not isinstance(extra, list | tuple) or not all(
        isinstance(item, str | os.PathLike) for item in extra
    ):
        # named by its kind, as agents.create names it, never quoted: an item may be a
        # key given in the wrong place, or a megabyte
        problem = core_option_problem({EXTRA_ROOTS_OPTION: extra})
        raise TypeError(f"the agent {problem}")
    return Roots(context.workspace, [Path(item) for item in extra])
