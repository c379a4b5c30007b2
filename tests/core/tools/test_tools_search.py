"""The finding tools: ``ls``, ``glob`` and ``grep`` (sorting, caps, .git, binary files)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from dsh.builtin_tools import _search
from dsh.builtin_tools._search import expand_braces
from dsh.messages import ToolResult

CallTool = Callable[..., Awaitable[ToolResult]]


def tree(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


PROJECT: dict[str, str | bytes] = {
    "README.md": "# demo\nTODO: docs\n",
    "src/app.py": "import os\n\ndef main():\n    # TODO: work\n    return os.sep\n",
    "src/util/helpers.py": "def todo():\n    pass\n",
    "src/web/page.ts": "// TODO: page\n",
    "src/web/page.tsx": "// todo: view\n",
    "logo.bin": b"TODO\0\x01\x02",
    ".git/config": "TODO in git\n",
    ".env": "SECRET=1\n",
}


# -- ls -------------------------------------------------------------------------------------


async def test_ls_through_the_loop(in_loop: Any, workspace: Path) -> None:
    tree(workspace, PROJECT)
    (workspace / "latest").symlink_to("src/app.py")
    [result] = await in_loop(("ls", {}))
    assert result["content"].splitlines() == [
        ".env",
        ".git/",
        "README.md",
        "latest -> src/app.py",
        "logo.bin",
        "src/",
    ]


async def test_ls_of_a_subdirectory_and_errors(call_tool: CallTool, workspace: Path) -> None:
    tree(workspace, PROJECT)
    (workspace / "empty").mkdir()
    assert (await call_tool("ls", path="src/web")).content == "page.ts\npage.tsx"
    assert (await call_tool("ls", path="empty")).content == "(empty is empty)"
    not_dir = await call_tool("ls", path="README.md")
    assert not_dir.is_error and "README.md is a file, not a directory" in not_dir.content
    missing = await call_tool("ls", path="nope")
    assert missing.is_error and "nope does not exist" in missing.content


async def test_ls_caps_entries(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "MAX_LS_ENTRIES", 3)
    tree(workspace, {f"f{n}": "" for n in range(5)})
    result = await call_tool("ls")
    assert result.content.splitlines() == [
        "f0",
        "f1",
        "f2",
        "[showing 3 of 5 entries; use glob to narrow]",
    ]


# -- glob -----------------------------------------------------------------------------------


async def test_glob_through_the_loop(in_loop: Any, workspace: Path) -> None:
    tree(workspace, PROJECT)
    [result] = await in_loop(("glob", {"pattern": "**/*.py"}))
    assert result["content"] == "src/app.py\nsrc/util/helpers.py"


async def test_glob_braces_directories_and_path(call_tool: CallTool, workspace: Path) -> None:
    tree(workspace, PROJECT)
    braces = await call_tool("glob", pattern="**/*.{ts,tsx}")
    assert braces.content == "src/web/page.ts\nsrc/web/page.tsx"
    assert (await call_tool("glob", pattern="*", path="src")).content == (
        "src/app.py\nsrc/util/\nsrc/web/"
    )


async def test_glob_skips_git_unless_asked(call_tool: CallTool, workspace: Path) -> None:
    tree(workspace, PROJECT)
    everything = (await call_tool("glob", pattern="**/*")).content.splitlines()
    assert ".env" in everything
    assert not [p for p in everything if p.startswith(".git")]
    assert (await call_tool("glob", pattern=".git/*")).content == ".git/config"


async def test_glob_searches_git_only_when_a_part_of_its_pattern_is_git(
    call_tool: CallTool, workspace: Path
) -> None:
    tree(workspace, {".git/x.gitkeep": "", "a.gitkeep": "", ".github/ci.yml": "", "b.txt": ""})
    assert (await call_tool("glob", pattern="**/*.gitkeep")).content == "a.gitkeep"
    assert (await call_tool("glob", pattern=".github/*")).content == ".github/ci.yml"
    assert (await call_tool("glob", pattern="{.git,.github}/*")).content == (
        ".git/x.gitkeep\n.github/ci.yml"
    )


async def test_glob_caps_and_reports_nothing_found(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "MAX_GLOB_RESULTS", 2)
    tree(workspace, {f"f{n}.txt": "" for n in range(4)})
    capped = await call_tool("glob", pattern="*.txt")
    assert capped.content.splitlines() == [
        "f0.txt",
        "f1.txt",
        "[showing 2 of 4 matches; narrow the pattern]",
    ]
    none = await call_tool("glob", pattern="*.rs")
    assert (none.is_error, none.content) == (False, "no paths match '*.rs' in .")


def test_expand_braces() -> None:
    assert expand_braces("*.py") == ["*.py"]
    assert expand_braces("{a,b}/*.{x,y}") == ["a/*.x", "a/*.y", "b/*.x", "b/*.y"]
    assert expand_braces("{only}") == ["{only}"]  # no comma: a literal


def test_expand_braces_refuses_more_than_its_limit_of_patterns() -> None:
    """``{a,b}`` 20 times is a million patterns, made in a thread an abort abandons."""
    from dsh.builtin_tools._search import MAX_BRACE_PATTERNS
    from dsh.tools import ToolError

    assert len(expand_braces("{a,b}" * 9)) == 512 <= MAX_BRACE_PATTERNS
    with pytest.raises(ToolError, match="more than 1000 alternatives"):
        expand_braces("{a,b}" * 20)


# -- grep -----------------------------------------------------------------------------------


async def test_grep_through_the_loop(in_loop: Any, workspace: Path) -> None:
    tree(workspace, PROJECT)
    [result] = await in_loop(("grep", {"pattern": r"TODO:"}))
    assert result["content"].splitlines() == [
        "README.md:2: TODO: docs",
        "src/app.py:4:     # TODO: work",
        "src/web/page.ts:1: // TODO: page",
        "[files skipped: 1 binary]",
    ]


async def test_grep_regex_flags_and_globs(call_tool: CallTool, workspace: Path) -> None:
    tree(workspace, PROJECT)
    ignore_case = await call_tool("grep", pattern=r"(?i)todo", glob="*.{ts,tsx}")
    assert (
        ignore_case.content == "src/web/page.ts:1: // TODO: page\nsrc/web/page.tsx:1: // todo: view"
    )
    by_path = await call_tool("grep", pattern=r"^def \w+", glob="src/**/*.py")
    assert by_path.content == "src/app.py:3: def main():\nsrc/util/helpers.py:1: def todo():"
    below = await call_tool("grep", pattern="def", path="src", glob="util/*.py")
    assert below.content == "src/util/helpers.py:1: def todo():"
    one_file = await call_tool("grep", pattern="os", path="src/app.py")
    assert one_file.content == "src/app.py:1: import os\nsrc/app.py:5:     return os.sep"


@pytest.mark.parametrize("glob", ["src/*.py", "src/**/*.py", "*/web/*.ts*", "src/*/*.{py,ts}"])
async def test_a_grep_glob_with_a_slash_matches_the_paths_glob_finds(
    call_tool: CallTool, workspace: Path, glob: str
) -> None:
    tree(workspace, PROJECT)
    found = (await call_tool("glob", pattern=glob)).content.splitlines()
    result = await call_tool("grep", pattern="", glob=glob)
    assert sorted({line.split(":")[0] for line in result.content.splitlines()}) == found


@pytest.mark.parametrize("glob", ["../*.py", "/etc/*", "~/x/*"])
async def test_a_grep_glob_cannot_reach_above_path(
    call_tool: CallTool, workspace: Path, glob: str
) -> None:
    tree(workspace, PROJECT)
    result = await call_tool("grep", pattern="x", path="src", glob=glob)
    assert result.is_error
    assert f"the pattern {glob!r} must be relative and stay below path" in result.content


async def test_grep_finds_nothing_and_bad_patterns(call_tool: CallTool, workspace: Path) -> None:
    tree(workspace, PROJECT)
    none = await call_tool("grep", pattern="zebra", glob="*.py")
    assert (none.is_error, none.content) == (
        False,
        "no matches for 'zebra' in . (files matching '*.py')",
    )
    bad = await call_tool("grep", pattern="(unclosed")
    assert bad.is_error and "'(unclosed' is not a valid Python regular expression" in bad.content
    missing = await call_tool("grep", pattern="x", path="nope")
    assert missing.is_error and "nope does not exist" in missing.content


async def test_grep_caps_matches_and_cuts_lines(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "MAX_GREP_MATCHES", 3)
    tree(workspace, {"a.txt": "hit\n" * 5, "b.txt": "hit " + "x" * 1000 + "\n"})
    result = await call_tool("grep", pattern="hit")
    assert result.content.splitlines() == [
        "a.txt:1: hit",
        "a.txt:2: hit",
        "a.txt:3: hit",
        "[showing 3 of 6 matching lines; narrow the pattern, path or glob]",
    ]
    wide = await call_tool("grep", pattern="hit", path="b.txt")
    limit = _search.MAX_GREP_LINE_CHARS
    assert (
        wide.content
        == f"b.txt:1: {('hit ' + 'x' * 1000)[:limit]} [... line cut at {limit} characters]"
    )


async def test_grep_caps_bytes(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "MAX_GREP_CHARS", 100)
    tree(workspace, {"a.txt": "".join(f"match {n:02} " + "y" * 20 + "\n" for n in range(10))})
    result = await call_tool("grep", pattern="match")
    *lines, note = result.content.splitlines()
    assert len("\n".join(lines)) <= 100
    assert [line[:17] for line in lines] == [
        f"a.txt:{n + 1}: match {n:02}" for n in range(len(lines))
    ]
    assert note == f"[showing {len(lines)} of 10 matching lines; narrow the pattern, path or glob]"


async def test_grep_skips_large_files(
    call_tool: CallTool, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "MAX_GREP_FILE_BYTES", 10)
    tree(workspace, {"big.txt": "needle " * 5, "small.txt": "needle"})
    result = await call_tool("grep", pattern="needle")
    assert result.content == "small.txt:1: needle\n[files skipped: 1 too large]"


async def test_grep_skips_a_named_pipe_without_waiting_for_a_writer(
    call_tool: CallTool, workspace: Path, fifo: Path
) -> None:
    tree(workspace, {"a.txt": "hello\n"})
    note = "[files skipped: 1 special (pipe, socket, device)]"
    assert (await call_tool("grep", pattern="hello")).content == f"a.txt:1: hello\n{note}"
    direct = await call_tool("grep", pattern="hello", path=fifo.name)
    assert direct.content == f"no matches for 'hello' in pipe\n{note}"


async def test_a_symlink_loop_is_listed_and_skipped_not_fatal(
    call_tool: CallTool, workspace: Path
) -> None:
    tree(workspace, {"a.txt": "x\n"})
    (workspace / "loop").symlink_to("loop")
    assert (await call_tool("ls")).content == "a.txt\nloop -> loop"
    assert (await call_tool("glob", pattern="*")).content == "a.txt\nloop"
    grepped = await call_tool("grep", pattern="x")
    assert grepped.content == "a.txt:1: x\n[files skipped: 1 unreadable]"


@pytest.mark.parametrize("name", ["glob", "grep"])
async def test_an_invalid_glob_is_refused_plainly(call_tool: CallTool, name: str) -> None:
    arguments = {"pattern": "**x"} if name == "glob" else {"pattern": "x", "glob": "a/**x"}
    result = await call_tool(name, **arguments)
    pattern = arguments.get("glob", "**x")
    assert result.content.startswith(
        f"tool {name!r} failed: the pattern {pattern!r} is not a valid glob: Invalid pattern"
    )
