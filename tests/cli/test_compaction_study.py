"""A user study of compaction from the command line: `dsh run` and `dsh chat` with
dsh-compaction (and dsh-persistence) against a loopback OpenAI-compatible server.

It checks what a person running long sessions meets: a tool result larger than the
whole window, a summariser that fails or writes nothing, `/compact` while a turn runs
and when idle, resuming a compacted session (`--continue`), a server whose window is
smaller than dsh's estimate says, and mistakes in the `compaction:` settings.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import ThreadedWire, contents, dsh, piped_chat, text_reply, tool_call_reply, wire

SUMMARISER = "You compact the history"  # how the summariser's request begins


def too_long(requested: int) -> Any:
    """An OpenAI-style refusal of a request of `requested` tokens (its window: 4,000)."""
    return wire.error(
        400,
        {
            "error": {
                "message": f"This model's maximum context length is 4000 tokens. However, you "
                f"requested {requested} tokens.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    )


TOO_LONG = too_long(13000)
LONG = "x" * 16_000  # ~4000 tokens by dsh's estimate
# three questions: the third is over 0.8 of a 10,000-token window and compacts
WINDOW = "compaction: {context_window: 10000, max_summary_tokens: 500}\n"


def stream_error(message: str) -> Any:
    body = {"error": {"message": message, "type": "server_error"}}
    return wire.sse([b"data: " + json.dumps(body).encode() + b"\n\n"])


def stored_events(env: dict[str, str]) -> list[dict[str, Any]]:
    (log,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()[1:]]


def model_of(server: Any) -> str:
    return f"openai-compatible:tiny@{server.url}"


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    return {**cli_env, "DSH_LOAD_PLUGINS": "compaction,persistence"}


def read_big_file(tmp_path: Path, server: Any, env: dict[str, str], window: bool) -> Any:
    """``dsh run "read big.txt"``: a file of ~47 KB (~11,800 tokens), on a model whose
    4,000-token window dsh knows (``window``: from dsh.yml) or learns when the server
    refuses the request."""
    (tmp_path / "big.txt").write_text(
        "".join(f"line {i} " + "word " * 20 + "\n" for i in range(400))
    )
    if window:
        (tmp_path / "dsh.yml").write_text("compaction: {context_window: 4000}\n")
    return dsh("-m", model_of(server), "run", "read big.txt", env=env, cwd=tmp_path)


@pytest.mark.plugins("compaction", "persistence")
@pytest.mark.parametrize("window", [True, False], ids=["known-window", "server-refuses"])
def test_a_tool_result_larger_than_the_window_is_stubbed_within_its_turn(
    model_server: Any, env: dict[str, str], tmp_path: Path, window: bool
) -> None:
    """The latest step's result is too large for any request: it is stubbed at once
    (before the request when dsh knows the window, else on the server's refusal), so
    the model learns it within the turn and the turn goes on."""
    refusal = [] if window else [TOO_LONG]
    read = tool_call_reply("read", {"path": "big.txt"})
    server = model_server([read, *refusal, text_reply("Read in parts.")])
    done = read_big_file(tmp_path, server, env, window)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Read in parts.\n"
    reason = "threshold" if window else "overflow"
    assert f"↻ history pruned ({reason}): " in done.stderr
    sent = server.bodies()[-1]
    assert contents(sent)[2].startswith("[output of read removed: 4")
    assert contents(sent)[2].endswith(  # what to do: the built-in read's own arguments
        "making the same call again gives the same result: ask for a smaller part of it "
        "with the arguments offset and limit]"
    )
    assert len(json.dumps(sent["messages"])) < 4000 * 4  # fits now
    # nothing is lost: the stored session still has the whole output
    (result,) = [e for e in stored_events(env) if e["type"] == "tool/result"]
    assert "line 399 word" in result["data"]["content"]


def three_questions(server: Any, env: dict[str, str], tmp_path: Path) -> Any:
    (tmp_path / "dsh.yml").write_text(WINDOW)
    return piped_chat(server, "one\ntwo\nthree\n", env, tmp_path)


@pytest.mark.plugins("compaction", "persistence")
@pytest.mark.parametrize(
    ("summary", "said"),
    [
        (stream_error("out of memory"), "SERVER: model 'openai-compatible:tiny': error in"),
        # the answer for the first of two chunks (the answers, ~4,000 tokens each, are
        # sent whole): refused at once, not merged into the next reply as the second's
        (
            text_reply(""),
            "EMPTY_SUMMARY: the summariser (model 'openai-compatible:tiny') wrote nothing",
        ),
    ],
    ids=["server-error", "empty-summary"],
)
def test_a_failing_summariser_is_a_warning_naming_compaction_and_the_chat_goes_on(
    model_server: Any, env: dict[str, str], tmp_path: Path, summary: Any, said: str
) -> None:
    replies = [text_reply(LONG), text_reply(LONG), summary, text_reply("Third.")]
    server = model_server(replies)
    done = three_questions(server, env, tmp_path)

    assert done.returncode == 0, done.stderr
    warning = "dsh: agent 'main': compaction (threshold, turn 3) failed, the history is unchanged: "
    assert warning + said in done.stderr
    assert done.stderr.count("compaction (threshold, turn 3) failed") == 1
    assert "[turn 3 completed" in done.stderr
    assert contents(server.bodies()[3]) == ["one", LONG, "two", LONG, "three"]  # intact
    assert done.stdout.endswith("Third.\n")


@pytest.mark.plugins("compaction", "persistence")
@pytest.mark.parametrize("how", ["--continue", "--session"])
def test_continuing_a_compacted_session_sends_the_summary_not_the_old_history(
    model_server: Any, env: dict[str, str], tmp_path: Path, how: str
) -> None:
    # two summariser calls: the two answers (~4,000 tokens each, sent whole) do not fit
    # one chunk (60 % of the 10,000-token window, less the prompt and the room kept for
    # the summary so far and the answer): one, the first answer and two, then the second
    summaries = [
        text_reply("Summary: asked one."),
        text_reply(summary := "Summary: asked one and two."),
    ]
    replies = [text_reply(LONG), text_reply(LONG), *summaries, text_reply("Third.")]
    server = model_server([*replies, text_reply("Fourth.")])
    assert three_questions(server, env, tmp_path).returncode == 0
    first, second = (server.bodies()[i]["messages"] for i in (2, 3))
    assert SUMMARISER in first[0]["content"] and SUMMARISER in second[0]["content"]
    assert first[1]["content"].count(LONG) == 1 and second[1]["content"].count(LONG) == 1

    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    which = ["--continue"] if how == "--continue" else ["--session", stored.stem]
    done = dsh("-m", model_of(server), "run", *which, "four", env=env, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Fourth.\n"
    sent = contents(server.bodies()[5])
    assert len(sent) == 4 and sent[1:] == ["three", "Third.", "four"]
    assert sent[0].startswith("[Summary of the earlier conversation") and summary in sent[0]
    assert LONG not in sent and "one" not in sent  # not the whole old history
    assert "↻ history" not in done.stderr  # resuming does not compact again


class GatedServer(wire.WireServer):
    """A slow reply (one with a pause) sends its first two pieces (the role, the first
    text), then waits for the summariser's
    request before it sends the rest (a turn still running while /compact works)."""

    def __init__(self, replies: list[Any]) -> None:
        super().__init__(replies)
        self.summarising = asyncio.Event()

    async def _write(self, reply: Any, reader: Any, writer: Any) -> bool:
        if SUMMARISER in self.requests[-1].body.decode():
            self.summarising.set()
        if reply.pause == 0 or not isinstance(reply.body, list):
            return await super()._write(reply, reader, writer)
        head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n"
        writer.write(head.encode() + b"content-type: text/event-stream\r\n\r\n")
        for index, piece in enumerate(reply.body):
            if index == 2:
                await writer.drain()
                await asyncio.wait_for(self.summarising.wait(), 30)
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


@pytest.mark.plugins("compaction")
def test_compact_while_a_turn_runs_keeps_the_turns_answer(
    cli_env: dict[str, str], tmp_path: Path, chat: Any
) -> None:
    (tmp_path / "dsh.yml").write_text("compaction: {tail_tokens: 1, context_window: 100000}\n")
    gated = text_reply("thinking", " it over.", pause=0.01)
    replies = [text_reply("A long answer. " * 40), gated, text_reply("Summary: one."), "Three."]
    server = ThreadedWire([])
    server.server = GatedServer([r if not isinstance(r, str) else text_reply(r) for r in replies])
    with server:
        child = chat(server, plugins="compaction")
        child.sendline("one")
        child.expect_exact("[turn 1 completed")
        child.expect_exact("> ")
        child.sendline("two")
        child.expect_exact("thinking")  # turn 2 runs, held until the summary is asked for
        child.sendline("/compact")
        # the two lines in either order: the turn goes on once the summary is asked for
        said = ["/compact: the history was summarised", "[turn 2 completed"]
        first = child.expect_exact(said)
        child.expect_exact(said[1 - first])
        child.expect_exact("> ")
        child.sendline("three")
        child.expect_exact("[turn 3 completed")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
        bodies = server.bodies()
    summary_body = next(b for b in bodies if SUMMARISER in b["messages"][0]["content"])
    assert "A long answer." in summary_body["messages"][1]["content"]
    sent = contents(bodies[-1])
    assert sent[0].startswith("[Summary of the earlier conversation")
    assert sent[1:] == ["two", "thinking it over.", "three"]  # turn 2's answer is kept


@pytest.mark.plugins("compaction")
def test_compact_when_idle_with_a_failing_summariser_says_so_and_keeps_the_history(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, chat: Any
) -> None:
    (tmp_path / "dsh.yml").write_text("compaction: {tail_tokens: 1, context_window: 100000}\n")
    answer = "A long answer. " * 40
    replies = [text_reply(answer), text_reply(answer), stream_error("summariser crashed")]
    server = model_server([*replies, text_reply("Three.")])
    child = chat(server, plugins="compaction")
    for line in ("one", "two"):
        child.sendline(line)
        child.expect_exact("completed")
        child.expect_exact("> ")
    child.sendline("/compact")
    child.expect_exact("/compact: failed, the history is unchanged (SERVER: ")
    child.expect_exact("summariser crashed")
    child.expect_exact("> ")
    child.sendline("three")
    child.expect_exact("[turn 3 completed")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert contents(server.bodies()[3]) == ["one", answer, "two", answer, "three"]


@pytest.mark.plugins("compaction")
def test_a_window_smaller_than_the_estimate_says_compacts_on_the_servers_error_and_retries(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """dsh's estimate (not the usage the server reports) decides the threshold: a server
    whose real window is smaller is caught by its context-length error, as documented."""
    (tmp_path / "dsh.yml").write_text("compaction: {context_window: 100000}\n")
    # the summariser's window is the one the server states, 4,000 tokens (it counts the
    # request as dsh estimates it: the window is not rescaled): four chunks of at most
    # ~1,650 tokens (the window less the prompt, the summary so far and the answer, each
    # ~1,000). The answer (~4,000 tokens, sent whole) is split in three pieces that fill
    # a chunk each, so "one" has a chunk of its own before them
    parts = ["one.", "one, a long answer", "one, a long answer, more", "one, a long answer."]
    summaries = [text_reply(f"Summary: {part}") for part in parts]
    refused = too_long(5200)
    server = model_server([text_reply(LONG), refused, *summaries, text_reply("Fits.")])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "compaction"}
    done = piped_chat(server, "one\ntwo\n", env, tmp_path)

    assert done.returncode == 0, done.stderr
    assert "↻ history summarised (overflow): " in done.stderr
    assert "↻ retrying the model call (CONTEXT_WINDOW_EXCEEDED: " in done.stderr
    assert "[turn 2 completed" in done.stderr
    chunks = [body["messages"][1]["content"] for body in server.bodies()[2:6]]
    assert "[user]\none\n</conversation>" in chunks[0] and "xxx" not in chunks[0]
    assert sum(chunk.count("x") for chunk in chunks) == len(LONG)  # all of it summarised
    retried = contents(server.bodies()[6])
    assert len(retried) == 2 and retried[-1] == "two"
    assert retried[0].startswith("[Summary of the earlier conversation")
    assert retried[0].endswith("Summary: one, a long answer.")


@pytest.mark.plugins("compaction")
@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "compaction:\n  treshold: 0.5\n",
            "dsh.yml:2:3: compaction.treshold: unknown key .*; did you mean 'threshold'",
        ),
        (
            "compaction:\n  threshold: 1.5\n",
            "dsh.yml:2:3: compaction.threshold: Input should be less than or equal to 1",
        ),
        (
            "compaction:\n  context_window: big\n",
            "dsh.yml:2:3: compaction.context_window: Input should be a valid integer",
        ),
        ("compaction: 0.8\n", "dsh.yml:1:1: compaction: Input should be a mapping"),
        (
            "agents:\n  - id: main\n    options:\n      compaction: {tail_ratio: 2}\n",
            r"dsh.yml:4:20: agents\[0\]\.options\.compaction\.tail_ratio: Input should be less",
        ),
    ],
    ids=["unknown-key", "out-of-range", "wrong-type", "not-a-mapping", "agent-option"],
)
def test_a_mistake_in_the_compaction_settings_names_the_file_line_and_key(
    cli_env: dict[str, str], tmp_path: Path, text: str, said: str
) -> None:
    (tmp_path / "dsh.yml").write_text(text)
    env = {**cli_env, "DSH_LOAD_PLUGINS": "compaction"}
    done = dsh(
        "-m", "openai-compatible:tiny@http://127.0.0.1:9/v1", "run", "hi", env=env, cwd=tmp_path
    )

    assert done.returncode == 2, done.stderr
    assert re.search(said, done.stderr), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.plugins("compaction", "persistence")
def test_an_idle_compact_is_stored_at_once_and_a_killed_chat_continues_from_it(
    model_server: Any, env: dict[str, str], tmp_path: Path, chat: Any
) -> None:
    """docs/compaction.md: between turns the events are flushed at once."""
    (tmp_path / "dsh.yml").write_text("compaction: {tail_tokens: 1, context_window: 100000}\n")
    answer = "A long answer. " * 40
    replies = [text_reply(answer), text_reply(answer), text_reply("Summary: one, two.")]
    server = model_server([*replies, text_reply("Three.")])
    child = chat(server, env=env)
    for line in ("one", "two"):
        child.sendline(line)
        child.expect_exact("completed")
        child.expect_exact("> ")
    child.sendline("/compact")
    child.expect_exact("/compact: the history was summarised")
    child.expect_exact("> ")
    child.kill(9)  # no orderly end: only what was flushed survives

    done = dsh("-m", model_of(server), "run", "--continue", "three", env=env, cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    sent = contents(server.bodies()[3])
    assert sent[0].startswith("[Summary of the earlier conversation")
    assert sent[0].endswith("Summary: one, two.") and sent[1:] == [answer, "three"]


@pytest.mark.plugins("compaction")
def test_an_overflow_with_nothing_to_compact_says_so_not_failed(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The server refuses the first request (one question: nothing to compact): the
    warning says nothing could be compacted, not that the compaction failed; the
    provider's error still ends the turn."""
    server = model_server([TOO_LONG])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "compaction"}
    done = dsh("-m", model_of(server), "run", "hi", env=env, cwd=tmp_path)

    assert done.returncode == 1, done.stderr
    said = "dsh: agent 'main': nothing could be compacted to fit the context window "
    assert said + "(overflow, turn 1, step 1); the history is unchanged\n" in done.stderr
    assert "failed" not in done.stderr
    assert "[turn 1 error · 0 in / 0 out tokens] CONTEXT_WINDOW_EXCEEDED: " in done.stderr
    assert len(server.bodies()) == 1  # not retried


@pytest.mark.plugins("compaction", "persistence")
def test_compact_with_nothing_to_compact_in_a_new_chat_stores_no_session(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Found in a new-user walkthrough: `/compact` typed first in a chat, then quit."""
    model = "openai-compatible:tiny@http://127.0.0.1:9/v1"  # never contacted
    done = dsh("-m", model, "chat", env=env, cwd=tmp_path, stdin="/compact\n")
    assert done.returncode == 0, done.stderr
    assert "nothing to compact" in done.stderr
    assert list(Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")) == []


@pytest.mark.plugins("compaction", "persistence")
def test_a_summariser_that_keeps_failing_is_a_warning_at_each_turn(
    model_server: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """The CLI prints a message once (a flush retried at the end of a turn and at
    dispose logs the same failure twice): the warning was the same text at each turn,
    so from the second failing turn on, the turn ended with no reason shown."""
    down = stream_error("out of memory")
    replies = [text_reply(LONG), text_reply(LONG), down, text_reply("Third.")]
    server = model_server([*replies, down, text_reply("Fourth.")])
    (tmp_path / "dsh.yml").write_text(WINDOW)
    done = piped_chat(server, "one\ntwo\nthree\nfour\n", env, tmp_path)

    assert done.returncode == 0, done.stderr
    for turn in (3, 4):
        warning = f"dsh: agent 'main': compaction (threshold, turn {turn}) failed, the history"
        assert warning in done.stderr
    assert done.stdout.endswith("Fourth.\n")
