"""``grep`` never shows a file outside the roots when another process (a background
bash job) changes the tree during its walk: a directory swapped for a symlink, a
symlink re-pointed. The races are made by patching the walk at the right moment,
never by timing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dsh.messages import ToolResult

CallTool = Callable[..., Awaitable[ToolResult]]


@pytest.mark.parametrize("glob", [None, "*.txt", "sub/*", "*/*.txt", "sub/**", "**/*.txt"])
async def test_grep_skips_a_directory_swapped_for_a_link_out_of_the_roots(
    call_tool: CallTool,
    workspace: Path,
    outside: Path,
    monkeypatch: pytest.MonkeyPatch,
    glob: str | None,
) -> None:
    """'sub' was a plain directory when the walk checked it, and a link to outside when
    it was listed: its files were read unchecked (only entries that were links when
    listed were resolved)."""
    sub = workspace / "sub"
    sub.mkdir()
    (sub / "a.txt").write_text("inside\n")
    real = os.scandir

    def scandir(path: Any = ".") -> Iterator[os.DirEntry[str]]:
        if not isinstance(path, int) and os.fspath(path) == str(sub) and not sub.is_symlink():
            shutil.rmtree(sub)  # the other process, between the check and the listing
            sub.symlink_to(outside)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    arguments = {"glob": glob} if glob else {}
    result = await call_tool("grep", pattern="secret", **arguments)
    where = f". (files matching {glob!r})" if glob else "."
    assert result.content == f"no matches for 'secret' in {where}"  # nor a count


async def test_grep_skips_a_link_re_pointed_out_of_the_roots_during_the_walk(
    call_tool: CallTool, workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'L' is resolved once per walk: re-pointed after that, 'self/L' was entered as
    if it still led to 'src', and grep counted what it found outside."""
    from dsh.builtin_tools import _glob

    (workspace / "src" / "d").mkdir(parents=True)
    (outside / "d").mkdir()
    (outside / "d" / "secret.txt").write_text("secret\n")
    (workspace / "L").symlink_to("src")
    (workspace / "self").symlink_to(".")
    real = _glob._entered

    def entered(link: Path, roots: Any) -> Path | None:
        target = real(link, roots)
        if link.name == "L":
            (workspace / "L").unlink()  # the other process, just after the check
            (workspace / "L").symlink_to(outside)
        return target

    monkeypatch.setattr(_glob, "_entered", entered)
    result = await call_tool("grep", pattern="secret", glob="*/*/*")
    assert result.content == "no matches for 'secret' in . (files matching '*/*/*')"
