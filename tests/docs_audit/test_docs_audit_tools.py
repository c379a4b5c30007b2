"""docs/tools.md's numbers and messages, with the values the page gives (the tools'
own tests use the module constants, so a changed constant would leave the page wrong
without failing them)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dsh.builtin_tools import builtin_tools
from dsh.messages import ToolCall, ToolResult
from dsh.tools import ToolContext, ToolRegistry, tool


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path.resolve()


async def call(workspace: Path, name: str, **arguments: Any) -> ToolResult:
    registry = ToolRegistry()
    for built_in in builtin_tools():
        registry.add("dsh.builtin_tools", built_in)
    registry.add("test", word_count)
    tool_call = ToolCall(id="c1", name=name, arguments=json.dumps(arguments))
    context = ToolContext(SimpleNamespace(options={}), workspace, tool_call)
    return await registry.execute(tool_call, context)


@tool
def word_count(path: str) -> str:
    """Fail as a tool does when a file is missing."""
    raise FileNotFoundError(f"no file {path}; give a path that exists")


async def test_read_shows_at_most_2000_lines_and_says_how_to_continue(workspace: Path) -> None:
    """tools.md:123-125: "at most 2000 lines ... per call; when the file has more, a last
    line says which lines were shown and how to continue: `[showing lines 1-2000 of 5120
    in log.txt; continue with offset=2001]`"."""
    (workspace / "log.txt").write_text("".join(f"{i}\n" for i in range(5120)))
    result = await call(workspace, "read", path="log.txt")
    lines = result.content.splitlines()
    assert len(lines) == 2001
    assert lines[-2] == "  2000\t1999"  # right-aligned to 6 places, a tab, the line
    assert lines[-1] == "[showing lines 1-2000 of 5120 in log.txt; continue with offset=2001]"


async def test_read_cuts_lines_longer_than_2000_characters(workspace: Path) -> None:
    """tools.md:126: "lines longer than 2000 characters are cut: `... [... line cut at
    2000 characters]`"."""
    (workspace / "wide.txt").write_text("x" * 2000 + "\n" + "y" * 2001 + "\n")
    lines = (await call(workspace, "read", path="wide.txt")).content.splitlines()
    assert lines[0] == "     1\t" + "x" * 2000
    assert lines[1] == "     2\t" + "y" * 2000 + " [... line cut at 2000 characters]"


async def test_read_offset_past_the_end_says_how_many_lines(workspace: Path) -> None:
    """tools.md:131-132: "An empty file gives `(name is empty)`; an `offset` past the end
    is an error saying how many lines there are"."""
    (workspace / "e.txt").write_text("")
    (workspace / "three.txt").write_text("a\nb\nc\n")
    assert (await call(workspace, "read", path="e.txt")).content == "(e.txt is empty)"
    result = await call(workspace, "read", path="three.txt", offset=9)
    assert result.is_error and "(3 lines)" in result.content


async def test_write_refuses_a_directory_and_answers_created_or_overwrote(
    workspace: Path,
) -> None:
    """tools.md:139-140: "Answers `created src/a.py (12 lines, 340 bytes)` (`1 line`,
    `1 byte` for one) or `overwrote ...`. A directory path is refused."."""
    created = await call(workspace, "write", path="src/a.py", content="a = 1\n" * 12)
    assert created.content == "created src/a.py (12 lines, 72 bytes)"
    again = await call(workspace, "write", path="src/a.py", content="b")
    assert again.content == "overwrote src/a.py (1 line, 1 byte)"
    refused = await call(workspace, "write", path="src", content="x")
    assert refused.is_error and "src is a directory" in refused.content
    assert (workspace / "src" / "a.py").read_text() == "b"


async def test_edit_counts_overlapping_occurrences_and_leaves_the_file(workspace: Path) -> None:
    """tools.md, edit: "an `old` that overlaps itself is ambiguous even when it fits
    once, and the error says so: `old matches 1 time in m.txt (line 1), and overlaps
    itself (2 matches counting overlaps); ...` for `aa` in `aaa`" ... "The file is
    unchanged after every error"."""
    (workspace / "m.txt").write_text("aaa\nb\n")
    result = await call(workspace, "edit", path="m.txt", old="aa", new="z")
    assert result.is_error
    assert (
        "old matches 1 time in m.txt (line 1), and overlaps itself (2 matches counting "
        "overlaps); " in result.content
    )
    assert "replace_all=true" in result.content
    assert (workspace / "m.txt").read_text() == "aaa\nb\n"


async def test_ls_lists_at_most_500_entries_then_a_note(workspace: Path) -> None:
    """tools.md:163-164: "Lists a directory's entries sorted by name, hidden ones
    included: directories end with `/` ... At most 500 entries, then a note"."""
    (workspace / "d").mkdir()
    for i in range(501):
        (workspace / "d" / f".f{i:03}").write_text("")
    lines = (await call(workspace, "ls", path="d")).content.splitlines()
    assert lines[:2] == [".f000", ".f001"] and lines[499] == ".f499"
    assert len(lines) == 501 and "500 of 501" in lines[-1]


async def test_grep_shows_at_most_200_lines_cut_at_300_characters(workspace: Path) -> None:
    """tools.md:186-187: "Limits: 200 matching lines and 30 000 characters shown (a note
    gives the total), lines cut at 300 characters"."""
    (workspace / "g.txt").write_text("hit\n" * 250 + "hit " + "z" * 400 + "\n")
    lines = (await call(workspace, "grep", pattern="hit", path="g.txt")).content.splitlines()
    assert len(lines) == 201 and "200 of 251" in lines[-1]
    (workspace / "h.txt").write_text("hit " + "z" * 400 + "\n")
    (line,) = (await call(workspace, "grep", pattern="hit", path="h.txt")).content.splitlines()
    assert line.startswith("h.txt:1: hit zzz")
    assert line.endswith(" [... line cut at 300 characters]")
    assert len(line.removeprefix("h.txt:1: ").split(" [...")[0]) == 300


async def test_bash_output_cap_keeps_15000_bytes_at_each_end(workspace: Path) -> None:
    """tools.md:212-213: "**Output cap:** 30 000 bytes. Beyond that the middle is cut:
    the first and last 15 000 bytes are kept around `[... N bytes of output cut here
    ...]`" (a word the cut goes through is left out whole: here none is)."""
    command = "head -c 15000 /dev/zero | tr '\\0' a; echo; head -c 9998 /dev/zero | tr '\\0' b;"
    command += " echo; head -c 15000 /dev/zero | tr '\\0' c"
    result = await call(workspace, "bash", command=command)
    head, _, rest = result.content.partition("\n[... 10000 bytes of output cut here")
    assert head == "a" * 15000
    assert rest.split("]\n", 1)[1] == "c" * 15000 + "\n[exit code 0]"


async def test_bash_output_cap_counts_the_raw_bytes(workspace: Path) -> None:
    """tools.md, bash: "30 000 bytes of what the command wrote (its raw bytes, before
    they are decoded)" ... "each byte that is not UTF-8 becoming U+FFFD"."""
    result = await call(workspace, "bash", command="head -c 40000 /dev/zero | tr '\\0' '\\377'")
    head, _, rest = result.content.partition("\n[... 10000 bytes of output cut here")
    assert head == "\ufffd" * 15000
    assert rest.split("]\n", 1)[1] == "\ufffd" * 15000 + "\n[exit code 0]"


@pytest.mark.parametrize(("seconds", "ok"), [(0, False), (1, True), (600, True), (601, False)])
async def test_bash_timeout_is_1_to_600_seconds(workspace: Path, seconds: int, ok: bool) -> None:
    """tools.md:219: "when `timeout` seconds (1-600) pass"; tools.md:210: "a non-zero exit
    code is a normal result, not an error"."""
    result = await call(workspace, "bash", command="exit 3", timeout=seconds)
    assert result.is_error is not ok
    if ok:
        assert result.content == "(no output)\n[exit code 3]"


def test_resolve_path_outside_the_workspace_raises_permission_error(workspace: Path) -> None:
    """tools.md:104-106: "`context.resolve_path(path)` ... raises `PermissionError` for a
    path outside them"."""
    tool_call = ToolCall(id="c1", name="x", arguments="{}")
    context = ToolContext(SimpleNamespace(options={}), workspace, tool_call)
    assert context.resolve_path("a/../b") == workspace / "b"
    with pytest.raises(PermissionError, match="outside the workspace"):
        context.resolve_path("../elsewhere")


async def test_a_failing_tool_is_an_error_result_with_its_traceback_at_debug(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """tools.md:111-113: "An exception becomes an error result the model reads (`tool
    'word_count' failed: FileNotFoundError: ...`) ... Its traceback is logged at DEBUG on
    the logger `dsh.tools`"."""
    with caplog.at_level(logging.DEBUG, logger="dsh.tools"):
        result = await call(workspace, "word_count", path="nope.txt")
    assert result.is_error
    assert result.content.startswith("tool 'word_count' failed: FileNotFoundError: no file")
    records = [r for r in caplog.records if r.name == "dsh.tools" and r.exc_info]
    assert records and records[0].levelno == logging.DEBUG


def test_resolve_path_takes_a_path_too(workspace: Path) -> None:
    """A tool whose path parameter is typed ``Path`` (which ``@tool`` accepts, and
    dsh-permissions checks) passed it on: AttributeError, 'PosixPath' has no 'strip'."""
    tool_call = ToolCall(id="c1", name="x", arguments="{}")
    context = ToolContext(SimpleNamespace(options={}), workspace, tool_call)
    assert context.resolve_path(Path("a/../b")) == workspace / "b"
    with pytest.raises(PermissionError, match="outside the workspace"):
        context.resolve_path(Path("../elsewhere"))


async def test_a_parameters_field_is_told_to_the_model_and_checks_the_call(
    tmp_path: Path,
) -> None:
    """tools.md, "Your own tools": a parameter annotated with ``Field`` has its
    description and bounds in the JSON schema the model is told, and "a call outside
    them gets an error result naming the parameter, without the tool running
    (`invalid arguments for 'quote': symbol: String should match pattern
    '^[A-Z]{1,5}$'`)". The page's own example, run."""
    import re
    import textwrap

    from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

    page = (Path(__file__).parents[2] / "docs" / "tools.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "Field(" in b]
    namespace: dict[str, Any] = {"__name__": "tools_md_quote"}
    exec(compile(textwrap.dedent(block), "tools.md", "exec"), namespace)
    plugin = SimpleNamespace(register_tools=namespace["register_tools"])
    model = ScriptedModel(
        [tool_calls(("quote", {"symbol": "acme"}), ("quote", {"symbol": "ACME"})), text("ok")]
    )
    async with scripted_harness(
        model, plugins=[("quote", plugin)], load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "quote ACME")
    [spec] = [s for s in model.requests[0].tools if s.name == "quote"]
    assert spec.parameters["properties"]["symbol"]["description"] == "a ticker"
    assert spec.parameters["properties"]["days"]["maximum"] == 30
    assert spec.parameters["required"] == ["symbol"]
    results = [(e.data["is_error"], e.data["content"]) for e in events if e.type == "tool/result"]
    assert results == [
        (True, "invalid arguments for 'quote': symbol: String should match pattern '^[A-Z]{1,5}$'"),
        (False, "ACME: 123.45 over 1 days"),
    ]


async def test_the_schema_tool_example_registers_a_tool_the_model_calls(tmp_path: Path) -> None:
    """tools.md, "Tools from a JSON schema": the page's MCP bridge example, run; a call
    outside the schema gets the error result the page quotes, without the tool running;
    the page's time limit for patterns is the module's."""
    import re
    import textwrap

    from dsh import _json_schema, _json_schema_words
    from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

    page = (Path(__file__).parents[2] / "docs" / "tools.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "schema_tool(" in b]
    namespace: dict[str, Any] = {"__name__": "tools_md_bridge"}
    exec(compile(textwrap.dedent(block), "tools.md", "exec"), namespace)
    plugin = SimpleNamespace(register_tools=namespace["register_tools"])
    model = ScriptedModel(
        [
            tool_calls(("lookup", {}), ("lookup", {"word": "dsh"}), ("lookup", {"wrod": "x"})),
            text("ok"),
        ]
    )
    async with scripted_harness(
        model, plugins=[("bridge", plugin)], load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "look it up")
    [spec] = [s for s in model.requests[0].tools if s.name == "lookup"]
    assert spec.parameters == namespace["LISTED"][0]["inputSchema"]
    results = [(e.data["is_error"], e.data["content"]) for e in events if e.type == "tool/result"]
    assert results == [
        (True, "invalid arguments for 'lookup': word: required, and missing"),
        (False, "dsh: a word"),
        (
            True,
            "invalid arguments for 'lookup': word: required, and missing; (arguments): "
            '"wrod" is not an argument of this tool (its arguments: word)',
        ),
    ]
    flat = " ".join(page.split())
    assert "`invalid arguments for 'lookup': word: required, and missing`" in flat
    assert '`... (arguments): "wrod" is not an argument of this tool (its arguments: word)`' in flat
    assert f"({_json_schema.PATTERN_SECONDS} s for all of a call's patterns)" in flat
    assert f"cut at {_json_schema_words.PREVIEW} characters" in flat
    assert _json_schema.SHOWN == 10
    assert "(the first ten, then `and more`)" in flat
