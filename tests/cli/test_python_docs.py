"""docs/python.md's programs run as a user runs them: each ```python block is saved as
a script and started with ``python`` in a workspace whose dsh.yml points the model
``fast`` at the loopback OpenAI-compatible server, which answers what the test scripts.
Each program's output, and what it did (the requests, the files, a resumed session),
must be what the page says it is."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_support import text_reply, tool_call_reply, wire

DOC = Path(__file__).parents[2] / "docs" / "python.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text())


def requested_tools(server: Any, n: int) -> list[str]:
    return [t["function"]["name"] for t in server.bodies()[n].get("tools", [])]


def shop_checks(workspace: Path, server: Any) -> None:
    assert requested_tools(server, 0) == ["in_stock"]  # the built-in tools left out
    tool_message = server.bodies()[1]["messages"][-1]
    assert (tool_message["role"], tool_message["content"]) == ("tool", "3")


def approver_checks(workspace: Path, server: Any) -> None:
    assert (workspace / "today.txt").read_text().strip()  # approved, so it ran
    assert "deny" not in server.bodies()[1]["messages"][-1]["content"].lower()


@dataclass
class Program:
    replies: Callable[[], list[Any]]
    stdout: str  # what it prints, or the start of it
    plugins: tuple[str, ...] = ()
    stdin: str = ""
    check: Callable[[Path, Any], None] | None = None


PROGRAMS = [
    Program(lambda: [text_reply("A demo ", "project.")], "A demo project.\n"),
    Program(
        lambda: [wire.error(401, {"error": {"message": "bad key", "type": "invalid_request"}})],
        "failed: AUTH: ",
    ),
    Program(lambda: [text_reply("Green ", "checks")], "Green checks\n[completed]\n"),
    Program(
        lambda: [tool_call_reply("in_stock", {"item": "apples"}), text_reply("Three.")],
        "Three.\n",
        check=shop_checks,
    ),
    Program(lambda: [text_reply("Refactored.")], "Refactored.\n"),
    Program(
        lambda: [tool_call_reply("bash", {"command": "date > today.txt"}), text_reply("Done.")],
        "bash",  # the question, then the answer
        plugins=("permissions",),
        stdin="y\n",
        check=approver_checks,
    ),
    # the resume program: see test_the_resume_program_takes_up_its_session
]


def start(workspace: Path, url: str, code: str, *argv: str, stdin: str, env: dict[str, str]) -> Any:
    fast = f"{{provider: openai-compatible, base_url: '{url}', model: m}}"
    (workspace / "dsh.yml").write_text(f"model: fast\nmodels:\n  fast: {fast}\n")
    script = workspace / "program.py"
    script.write_text(code)
    return subprocess.run(
        [sys.executable, str(script), *argv],
        input=stdin,
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_every_program_of_the_page_is_run_here() -> None:
    assert len(blocks()) == len(PROGRAMS) + 1


@pytest.mark.parametrize(
    "index",
    [
        pytest.param(i, marks=[pytest.mark.plugins(*p.plugins)] if p.plugins else [], id=str(i))
        for i, p in enumerate(PROGRAMS)
    ],
)
def test_a_program_of_the_page_does_what_it_says(
    index: int, model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    program = PROGRAMS[index]
    server = model_server(program.replies())
    done = start(tmp_path, server.url, blocks()[index], stdin=program.stdin, env=cli_env)
    assert done.returncode == 0, done.stderr
    if program.stdin:  # the question went to the terminal's prompt, before the answer
        assert program.stdout in done.stdout
        assert done.stdout.endswith("Done.\n")
    else:
        assert done.stdout.startswith(program.stdout), done.stdout
    if program.check is not None:
        program.check(tmp_path, server)


@pytest.mark.plugins("persistence")
def test_the_resume_program_takes_up_its_session(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    code = blocks()[len(PROGRAMS)]
    server = model_server([text_reply("Noted."), text_reply("It was 7.")])
    first = start(tmp_path, server.url, code, stdin="", env=cli_env)
    assert first.returncode == 0, first.stderr
    session_id, answer = first.stdout.splitlines()
    assert (session_id.startswith("main-session-"), answer) == (True, "Noted.")

    second = start(
        tmp_path, server.url, code, session_id, "Which", "number?", stdin="", env=cli_env
    )
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [session_id, "It was 7."]
    said = [(m["role"], m.get("content")) for m in server.bodies()[1]["messages"]]
    assert said[-3:] == [
        ("user", "Remember the number 7."),
        ("assistant", "Noted."),
        ("user", "Which number?"),
    ]


@pytest.mark.parametrize(
    "index",
    [
        pytest.param(0, id="first"),
        pytest.param(3, id="shop"),
        pytest.param(4, id="time-limit"),
        pytest.param(5, id="approver", marks=pytest.mark.plugins("permissions")),
        pytest.param(6, id="resume", marks=pytest.mark.plugins("persistence")),
    ],
)
def test_a_program_printing_the_answer_fails_when_the_turn_fails(
    index: int, model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Each program printing ``result.text`` calls ``raise_for_error()`` first, as the
    first one does: a failed turn is a ``TurnError`` and exit status 1, not an empty
    line and 0 (the Shop, time-limit, approver and resume programs printed that)."""
    refused = wire.error(401, {"error": {"message": "bad key", "type": "invalid_request"}})
    server = model_server([refused])
    done = start(tmp_path, server.url, blocks()[index], stdin="", env=cli_env)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "TurnError" in done.stderr and "bad key" in done.stderr
    assert "\n\n" not in "\n" + done.stdout  # no empty answer printed
