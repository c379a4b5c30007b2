"""The renderer reads the ``bash`` tool's own wording: a result of a command that
printed nothing, as the real tool writes it, is shown without a line count, whatever
its status line (so a change of that wording in the tool cannot leave the renderer
counting lines again)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from dsh._render import Renderer
from dsh.builtin_tools import builtin_tools
from dsh.builtin_tools._bash_result import NO_OUTPUT, status
from dsh.messages import ToolCall
from dsh.session import Session
from dsh.tools import ToolContext, ToolRegistry


def shown(content: str) -> str:
    """The note the renderer writes for a bash result ``content``."""
    err = io.StringIO()
    renderer, session = Renderer(out=io.StringIO(), err=err), Session("s")
    data = {"call_id": "c", "name": "bash", "content": content, "is_error": False}
    renderer.session_event(session, session._append("tool/result", data))
    return err.getvalue()


async def bash_result(command: str, workspace: Path) -> str:
    """What the real ``bash`` tool returns for ``command``."""
    registry = ToolRegistry()
    for built_in in builtin_tools():
        registry.add("dsh.builtin_tools", built_in)
    call = ToolCall(id="c1", name="bash", arguments=json.dumps({"command": command}))
    result = await registry.execute(call, ToolContext(SimpleNamespace(options={}), workspace, call))
    assert not result.is_error
    return result.content


@pytest.mark.skipif(sys.platform == "win32", reason="the bash tool is POSIX")
@pytest.mark.parametrize(("command", "code"), [("true", 0), ("exit 3", 3), ("kill -9 $$", -9)])
async def test_the_real_tools_result_for_no_output_has_no_line_count(
    command: str, code: int, tmp_path: Path
) -> None:
    content = await bash_result(command, tmp_path)
    assert shown(content) == f"← bash: {' '.join(content.splitlines())}\n"  # no "(2 lines)"
    assert content == f"{NO_OUTPUT}\n{status(code)}"


@pytest.mark.parametrize("code", [0, 1, 255, None, -9, -15, -200])
def test_every_status_line_after_no_output_is_not_counted(code: int | None) -> None:
    assert shown(f"{NO_OUTPUT}\n{status(code)}") == f"← bash: {NO_OUTPUT} {status(code)}\n"


def test_output_before_the_status_line_is_counted() -> None:
    assert shown(f"x\n{status(-9)}") == f"← bash: x {status(-9)} (2 lines)\n"
