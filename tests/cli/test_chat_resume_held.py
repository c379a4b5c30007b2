"""chat's ``/resume ID`` of a session another process continues: refused, and the chat
goes on with its own session (it was dropped for a new one, its history lost to the
model, found by the review of the session claims)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply

pytestmark = pytest.mark.plugins("persistence")

HOLDER = """
import sys, anyio
from dsh.harness import Harness

async def main():
    async with Harness(config="dsh.yml") as harness:
        await harness.agents.resume("holder", sys.argv[1], options={"model": sys.argv[2]})
        print("holding", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)

anyio.run(main)
"""


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}


@contextmanager
def held_elsewhere(server: Any, env: dict[str, str], cwd: Path) -> Iterator[str]:
    """The id of a session one ``dsh run`` stored (the server's first reply), which
    another process continues (resumed on the model ``tiny`` of the dsh.yml written in
    ``cwd``) until the block ends."""
    model = f"openai-compatible:tiny@{server.url}"
    first = dsh("-m", model, "run", "--json", "remember blue", env=env, cwd=cwd)
    assert first.returncode == 0, first.stderr
    held: str = json.loads(first.stdout.splitlines()[0])["session"]
    (cwd / "dsh.yml").write_text(
        f"models: {{tiny: {{provider: openai-compatible, base_url: '{server.url}', model: t}}}}\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, held, "tiny"],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        yield held
    finally:
        holder.communicate("", timeout=30)


def users(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_resuming_a_session_held_elsewhere_keeps_the_current_chat(
    model_server: Any, chat: Any, env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Noted."), text_reply("Hi."), text_reply("Still here.")])
    with held_elsewhere(server, env, tmp_path) as held:
        child = chat(server, env=env, plugins="persistence")
        child.sendline("hello")
        child.expect_exact("[turn 1 completed")
        child.expect_exact("> ")
        child.sendline(f"/resume {held}")
        child.expect_exact(f"/resume: session {held!r} is in use: another process")
        child.expect_exact("this chat goes on")
        child.expect_exact("> ")
        child.sendline("and now?")
        child.expect_exact("[turn 2 completed")
        child.sendline("/quit")
        child.expect_exact("")
    assert users(server.bodies()[2]) == ["hello", "and now?"]  # its own history goes on


@pytest.mark.parametrize("wanted", ["--continue", "--session"])
def test_chat_continue_of_a_held_session_with_empty_input_is_refused_as_with_a_line(
    model_server: Any, env: dict[str, str], tmp_path: Path, wanted: str
) -> None:
    """Empty input makes the checks a first line would: a session another process
    continues is refused (status, message) as it is when a line comes; found so only
    the claim was missed (the empty input said 0)."""
    server = model_server([text_reply("Noted.")])
    with held_elsewhere(server, env, tmp_path) as held:
        options = ["--continue"] if wanted == "--continue" else ["--session", held[:8]]
        with_line = dsh("-m", "tiny", "chat", *options, env=env, cwd=tmp_path, stdin="hello\n")
        empty = dsh("-m", "tiny", "chat", *options, env=env, cwd=tmp_path, stdin="")
    assert with_line.returncode != 0, with_line.stderr
    assert f"session {held!r} is in use: another process" in with_line.stderr
    assert (empty.returncode, empty.stdout) == (with_line.returncode, "")
    assert empty.stderr == with_line.stderr.splitlines(keepends=True)[-1]
    assert len(server.bodies()) == 1  # neither asked the model
    # once the other process is done, the empty input finds the session free
    done = dsh("-m", "tiny", "chat", *options, env=env, cwd=tmp_path, stdin="")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_resuming_a_held_session_before_the_first_turn_keeps_the_chats_session(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """Before a turn the chat's session was never stored: it said "a new session
    starts", then "continuing session <another new id> ('<the held one's title>', 0
    turns so far)", and the id the chat announced was dropped."""
    server = model_server([text_reply("Noted."), text_reply("Hi.")])
    with held_elsewhere(server, env, tmp_path) as held:
        done = dsh("-m", "tiny", "chat", env=env, cwd=tmp_path, stdin=f"/resume {held}\nhi\n")
    assert done.returncode == 1, done.stderr  # the /resume failed
    announced = done.stderr.split("dsh: new session ", 1)[1].split()[0]
    assert f"/resume: session {held!r} is in use: another process" in done.stderr
    assert "this chat goes on" in done.stderr and "continuing session" not in done.stderr
    assert done.stderr.count("new session") == 1, done.stderr
    listed = dsh("sessions", "list", "--json", env=env, cwd=tmp_path).stdout
    assert announced in [row["id"] for row in json.loads(listed)]  # the turn went there
