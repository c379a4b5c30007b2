"""``grep`` and ``glob`` stay within bounds: a pattern that backtracks catastrophically
neither freezes the event loop nor runs unbounded; each ``{a,b}`` alternative of a
``glob`` pattern must stay below its path; ``grep`` lists files sorted by path, as
``glob`` does."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.builtin_tools import _search
from dsh.messages import ToolResult
from dsh.testing import ScriptedModel, scripted_harness, text, tool_calls

CallTool = Callable[..., Awaitable[ToolResult]]
LIMIT = 10  # seconds any single wait in these tests may take

# Backtracks catastrophically on a run of a's that does not end the line: Python's
# `re` takes seconds on this line, holding the GIL throughout; `regex` longer still.
CATASTROPHIC = r"(a|aa)+$"
SLOW_LINE = "a" * 33 + "!"


async def test_a_file_the_pattern_is_too_slow_on_is_skipped_and_named(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "GREP_FILE_SECONDS", 0.1, raising=False)
    (workspace / "a.txt").write_text("aa\n")
    (workspace / "slow.txt").write_text(f"aa\n{SLOW_LINE}\n")  # its first line is not shown
    (workspace / "z.txt").write_text("b\naaaa\n")
    result = await call_tool("grep", pattern=CATASTROPHIC)
    assert not result.is_error
    assert result.content == (
        "a.txt:1: aa\nz.txt:2: aaaa\n[1 file skipped: too slow for the pattern: slow.txt]"
    )


async def test_a_pattern_too_slow_on_every_file_or_on_five_is_an_error_naming_them(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "GREP_FILE_SECONDS", 0.1, raising=False)
    (workspace / "a.txt").write_text("b\n")  # searched, but after it the pattern is too slow
    for name in "bcdefgh":
        (workspace / f"{name}.txt").write_text(f"{SLOW_LINE}\n")
    (workspace / "binary.bin").write_bytes(b"aa\0")
    result = await call_tool("grep", pattern=CATASTROPHIC)
    assert result.is_error
    assert (
        f"the pattern {CATASTROPHIC!r} took too long on b.txt, c.txt, d.txt, e.txt, f.txt: "
        "simplify it" in result.content
    )
    (workspace / "one").mkdir()
    (workspace / "one" / "slow.txt").write_text(f"{SLOW_LINE}\n")
    (workspace / "one" / "binary.bin").write_bytes(b"aa\0")
    alone = await call_tool("grep", pattern=CATASTROPHIC, path="one")
    assert alone.is_error
    assert f"the pattern {CATASTROPHIC!r} took too long on one/slow.txt: simplify" in alone.content


async def test_the_event_loop_runs_while_a_pattern_backtracks_and_an_abort_ends_the_turn(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ticker task ticks while grep matches; the abort it then sends ends the turn
    (the grep is still matching: it would give up only after GREP_FILE_SECONDS)."""
    (workspace / "slow.txt").write_text(f"{SLOW_LINE}\n")
    searching, finished = threading.Event(), threading.Event()
    real_split, real_grep = _search.split_lines, _search._grep

    def split(text: str) -> list[str]:
        lines = real_split(text)
        searching.set()  # the pattern is about to be matched
        return lines

    def grep(*args: Any) -> str:
        try:
            return real_grep(*args)
        finally:
            finished.set()

    monkeypatch.setattr(_search, "split_lines", split)
    monkeypatch.setattr(_search, "_grep", grep)
    ticks_while_matching = 0

    async def ticker() -> None:
        nonlocal ticks_while_matching
        while True:
            await anyio.sleep(0.1)
            if searching.is_set() and not finished.is_set():
                ticks_while_matching += 1

    model = ScriptedModel([tool_calls(("grep", {"pattern": CATASTROPHIC})), text("unused")])
    async with scripted_harness(model, load_entry_points=False, workspace=workspace) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(ticker)
            agent.send("go")
            with anyio.fail_after(LIMIT):
                # ticks are what is awaited here: poll
                while ticks_while_matching < 5:  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            agent.abort()
            with anyio.fail_after(LIMIT):
                await agent.when_idle()
            tasks.cancel_scope.cancel()
        events = list(agent.session.events)
    [result] = [e.data for e in events if e.type == "tool/result"]
    assert result["is_error"] is True
    assert [e.data["reason"] for e in events if e.type == "turn/end"] == ["aborted"]


@pytest.mark.parametrize(
    ("pattern", "alternative"), [("{..,sub}/*/*", "../*/*"), ("{/etc/*,x}", "/etc/*")]
)
async def test_each_glob_alternative_must_stay_below_path(
    call_tool: CallTool, workspace: Path, pattern: str, alternative: str
) -> None:
    (workspace / "sub" / "d").mkdir(parents=True)
    (workspace / "sub" / "d" / "f.txt").write_text("x\n")
    result = await call_tool("glob", pattern=pattern, path="sub")
    assert result.is_error
    assert (
        f"the pattern {pattern!r} (its alternative {alternative!r}) must be relative and "
        "stay below path" in result.content
    )
    assert "f.txt" not in result.content and "NotImplementedError" not in result.content
    result = await call_tool("grep", pattern="x", glob=pattern.replace("*/*", "*/*.txt"))
    assert result.is_error
    assert f"the pattern {pattern.replace('*/*', '*/*.txt')!r} (its alternative" in result.content


async def test_grep_sorts_files_by_path_as_glob_does(call_tool: CallTool, workspace: Path) -> None:
    for name in ["b.txt", "a/x.txt", "a.txt", "a/b/y.txt", "a/c.txt", "a-b/z.txt"]:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("hit\n")
    globbed = (await call_tool("glob", pattern="**/*.txt")).content.splitlines()
    grepped = (await call_tool("grep", pattern="hit")).content.splitlines()
    assert [line.removesuffix(":1: hit") for line in grepped] == globbed
    assert globbed == ["a-b/z.txt", "a.txt", "a/b/y.txt", "a/c.txt", "a/x.txt", "b.txt"]
