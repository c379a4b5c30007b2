"""`dsh chat`'s /resume (with dsh-persistence) and /compact (with dsh-compaction)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import text_reply


@pytest.mark.plugins("persistence")
def test_resume_continues_a_stored_session(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, chat: Any
) -> None:
    server = model_server([text_reply("First answer."), text_reply("Second answer.")])
    child = chat(server, plugins="persistence")
    child.sendline("remember the number 7")
    child.expect_exact("[turn 1 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    (stored,) = Path(cli_env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")

    child = chat(server, plugins="persistence")
    child.sendline(f"/resume {stored.stem[:-6]}")  # a unique prefix, as dsh sessions takes
    child.expect_exact(f"continuing session {stored.stem} ('remember the number 7', 1 turn so far)")
    child.sendline("which number?")
    child.expect_exact("Second answer.")
    child.expect_exact("[turn 2 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    messages = server.bodies()[1]["messages"]
    assert [m.get("content") for m in messages[1:]] == [
        "remember the number 7",
        "First answer.",
        "which number?",
    ]


@pytest.mark.plugins("persistence")
def test_resume_keeps_the_chats_options_from_the_config_as_it_is_now(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, chat: Any
) -> None:
    """The stored session brings its history; the system prompt (and every other agent
    option, permission rules included) is the running chat's, from dsh.yml now."""
    server = model_server([text_reply("First answer."), text_reply("Second answer.")])
    child = chat(server, plugins="persistence")
    child.sendline("hello")
    child.expect_exact("[turn 1 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    (stored,) = Path(cli_env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    (tmp_path / "dsh.yml").write_text("agents:\n  - id: main\n    system_prompt: Now this.\n")

    child = chat(server, plugins="persistence")
    child.sendline(f"/resume {stored.stem}")
    child.expect_exact(f"continuing session {stored.stem} ('hello', 1 turn so far)")
    child.sendline("again")
    child.expect_exact("[turn 2 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    first, second = (body["messages"] for body in server.bodies())
    assert first[0]["role"] == second[0]["role"] == "system"
    assert first[0]["content"].startswith("You are dsh")
    assert second[0]["content"] == "Now this."
    assert [m.get("content") for m in second[1:]] == ["hello", "First answer.", "again"]


@pytest.mark.plugins("compaction")
def test_compact_runs_the_compaction_plugin_by_hand(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, chat: Any
) -> None:
    server = model_server([text_reply("An answer."), text_reply("Summary: asked, answered.")])
    child = chat(server, plugins="compaction")
    child.sendline("a question")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    child.sendline("/compact")
    child.expect_exact("/compact: ")
    child.expect(r"nothing to compact|the history was|failed, the history is unchanged")
    child.expect_exact("> ")  # the prompt comes back
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert len(server.bodies()) >= 1


def test_compact_without_the_plugin_says_what_is_missing(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, chat: Any
) -> None:
    child = chat(model_server([]), plugins="")
    child.sendline("/compact")
    if importlib.util.find_spec("dsh_compaction") is not None:  # what left it out, and
        # how to turn it on, as /resume says it of dsh-persistence
        child.expect_exact(
            "/compact needs the compaction plugin (dsh-compaction is installed but "
            "DSH_LOAD_PLUGINS, empty, leaves it out; add compaction to it, or give "
            "-p compaction)"
        )
    else:
        child.expect_exact("/compact needs the compaction plugin (dsh-compaction is not installed)")
    child.expect_exact("> ")  # the prompt comes back
    child.sendline("/quit")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize(
    "plugins",
    [pytest.param("persistence", marks=pytest.mark.plugins("persistence")), ""],
)
def test_a_failed_resume_keeps_the_current_chat(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, chat: Any, plugins: str
) -> None:
    server = model_server([text_reply("Noted."), text_reply("Banana.")])
    child = chat(server, plugins=plugins)
    child.sendline("remember the word banana")
    child.expect_exact("[turn 1 completed")
    child.expect_exact("> ")
    child.sendline("/resume typo-id")
    if plugins:
        child.expect_exact("/resume: no stored session 'typo-id' (`dsh sessions list` shows them)")
    else:  # what left it out, as dsh chat --continue says it
        child.expect_exact("/resume: no plugin stores sessions (")
        if importlib.util.find_spec("dsh_persistence") is not None:
            child.expect_exact(
                "dsh-persistence is installed but DSH_LOAD_PLUGINS, empty, leaves it out; "
                "add persistence to it, or give -p persistence)"
            )
    child.expect_exact("this chat goes on")
    child.expect_exact("> ")
    child.sendline("what word?")
    child.expect_exact("[turn 2 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0  # at a terminal the person saw it (a script's is 1)
    messages = server.bodies()[1]["messages"]
    assert [m.get("content") for m in messages[1:]] == [
        "remember the word banana",
        "Noted.",
        "what word?",
    ]


def test_resume_while_a_turn_runs_keeps_the_turn(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, chat: Any
) -> None:
    slow = text_reply("thinking", ".", ".", ".", ".", " done.", pause=0.3)
    server = model_server([slow])
    child = chat(server, plugins="")
    child.sendline("start")
    child.expect_exact("thinking")
    child.sendline("/resume some-id")
    child.expect_exact("/resume: the agent is working")
    child.expect_exact("done.")
    child.expect_exact("[turn 1 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)


@pytest.mark.plugins("compaction")
def test_a_scripts_compact_is_done_before_its_next_line(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    from cli_support import piped_chat

    # a slow summary: the next line's turn must not start (and end the input, which
    # cancelled the compaction) before it is in
    (tmp_path / "dsh.yml").write_text("compaction: {tail_tokens: 1, context_window: 100000}\n")
    answer = "A long answer, " * 30
    server = model_server(
        [
            text_reply(answer),
            text_reply(answer),
            text_reply("Summary: asked twice.", pause=1.0),
            text_reply("Third."),
        ]
    )
    script = "first question\nsecond question\n/compact\nthird question\n"
    done = piped_chat(server, script, cli_env, tmp_path, "compaction")
    assert done.returncode == 0, done.stderr
    assert "/compact: the history was summarised" in done.stderr
    third = server.bodies()[3]["messages"]
    assert "Summary: asked twice." in str(third)  # the turn after it sees the summary
    assert third[-1] == {"role": "user", "content": "third question"}


@pytest.mark.plugins("compaction")
def test_a_scripts_failed_compact_makes_the_status_1_and_nothing_to_compact_does_not(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A failed /compact (the summariser's answer an error) is a failed command: the
    status says so (the line after it runs); "nothing to compact" is no failure."""
    from cli_support import piped_chat, wire

    (tmp_path / "dsh.yml").write_text("compaction: {tail_tokens: 1, context_window: 100000}\n")
    answer = "A long answer, " * 30
    crashed = wire.sse([b'data: {"error": {"message": "summariser crashed"}}\n\n'])
    server = model_server([text_reply(answer), text_reply(answer), crashed, text_reply("3.")])
    script = "/compact\nfirst question\nsecond question\n/compact\nthird question\n"
    done = piped_chat(server, script, cli_env, tmp_path, "compaction")
    assert done.returncode == 1, done.stderr
    assert "/compact: nothing to compact" in done.stderr
    assert "/compact: failed, the history is unchanged" in done.stderr
    assert "summariser crashed" in done.stderr and done.stdout.endswith("3.\n")

    server = model_server([])
    done = piped_chat(server, "/compact\n", cli_env, tmp_path, "compaction")
    assert (done.returncode, done.stderr.count("/compact: nothing to compact")) == (0, 1)


@pytest.mark.plugins("persistence")
def test_resume_shows_a_bidi_control_in_the_sessions_id_as_an_escape(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """An id may hold a bidi control (``dsh._ids``): /resume's lines show it as
    ``\\u202e`` in a quoted id (``dsh.persistence.shown_id``), as chat's start-up and
    ``dsh sessions list`` do, not reversing the rest of the line."""
    from cli_support import piped_chat

    from dsh_persistence import PersistenceSettings, SessionInfo, open_backend
    from dsh_persistence.testing import LogBuilder

    backend = open_backend(PersistenceSettings(directory=Path(cli_env["DSH_PERSISTENCE_DIR"])))
    try:
        for n, end in enumerate(("cd", "xy")):
            log = LogBuilder()
            log.turn("hello", calls=())
            info = SessionInfo(f"main-session-ab\u202e{end}", 1.0 + n, {"agent": "main"}, "", "")
            backend.append(info, log.events, durable=False)
    finally:
        backend.close()
    server = model_server([text_reply("Again.")])
    script = "/resume ab\n/resume ab\u202ec\nagain\n"
    done = piped_chat(server, script, cli_env, tmp_path, "persistence")
    assert "\u202e" not in done.stderr
    listed = "'main-session-ab\\u202ecd', 'main-session-ab\\u202exy'"  # dsh.persistence.shown_id
    assert f"'ab' matches 2 sessions: {listed};" in done.stderr
    assert "continuing session 'main-session-ab\\u202ecd' ('hello', 1 turn so far)" in done.stderr
    assert done.stdout == "Again.\n"
