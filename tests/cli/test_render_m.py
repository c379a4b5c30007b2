"""What `dsh run` and `dsh chat` show, beyond test_render.py (the renderer alone): the
answer on stdout and one line per note on stderr, previews and their limits, the
session it watches, --json lines, and a reader that goes away."""

from __future__ import annotations

import errno
import io
import os
from typing import Any

from dsh._render import Renderer, shorten
from dsh.session import Session

Event = tuple[str, dict[str, Any]]


def chunk(text: str, kind: str = "text") -> Event:
    return "assistant/chunk", {"kind": kind, "text": text}


def call(name: str, arguments: str) -> Event:
    return "tool/call", {"call_id": "c", "name": name, "arguments": arguments}


def result(content: str, *, is_error: bool = False) -> Event:
    return "tool/result", {"call_id": "c", "name": "bash", "content": content, "is_error": is_error}


def turn_end(turn: int = 1, reason: str = "completed", **extra: Any) -> Event:
    usage = {"input_tokens": 12, "output_tokens": 3}
    return "turn/end", {"turn": turn, "reason": reason, "usage": usage, **extra}


def feed(renderer: Renderer, *events: Event, session: Session | None = None) -> None:
    session = session or Session("s")
    for kind, data in events:
        renderer.session_event(session, session._append(kind, data))


def shown(*events: Event, json: bool = False) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    feed(Renderer(out, err, json=json), *events)
    return out.getvalue(), err.getvalue()


def test_the_answer_streams_to_stdout_and_each_note_is_a_line_of_stderr() -> None:
    out, err = shown(
        chunk("Hel"),
        chunk("lo"),
        call("read", '{"path": "a.txt"}'),
        result("x\ny"),
        chunk("Done.\n"),
        turn_end(),
    )
    # a note ends the answer's unfinished line on stdout, once
    assert out == "Hello\nDone.\n"
    assert err == (
        '→ read({"path": "a.txt"})\n'
        "← bash: x y (2 lines)\n"
        "[turn 1 completed · 12 in / 3 out tokens]\n"
    )


def test_only_text_chunks_are_shown() -> None:
    out, err = shown(chunk("thinking it over", kind="reasoning"), chunk("Yes."))
    assert (out, err) == ("Yes.", "")


def test_previews_are_one_line_of_at_most_their_limit() -> None:
    assert shorten("a" * 100) == "a" * 100
    assert shorten("a" * 101) == "a" * 99 + "…"
    assert shorten(" one\n\ttwo   three \n") == "one two three"
    assert shorten("abcdef", 4) == "abc…"


def test_a_tool_calls_arguments_are_shown_in_60_characters() -> None:
    arguments = '{"command": "' + "x" * 80 + '"}'
    _, err = shown(call("bash", arguments))
    assert err == f"→ bash({arguments[:59]}…)\n"


def test_a_results_preview_is_100_characters() -> None:
    _, err = shown(result("y" * 100), result("z" * 101))
    assert err.splitlines() == [f"← bash: {'y' * 100}", f"← bash: {'z' * 99}…"]


def test_a_command_that_printed_nothing_has_no_line_count() -> None:
    """bash's "(no output)" and its exit code are no two lines the command printed."""
    from dsh.builtin_tools._bash import NO_OUTPUT

    _, err = shown(result(f"{NO_OUTPUT}\n[exit code 0]"), result("x\n[exit code 1]"))
    assert err.splitlines() == [
        "← bash: (no output) [exit code 0]",
        "← bash: x [exit code 1] (2 lines)",
    ]


def test_output_that_begins_as_no_output_does_is_counted() -> None:
    """A command that printed "(no output)" and more: its lines are counted (review
    rerev-cli, finding 6); only bash's own "(no output)" and status are not."""
    shown_ = shown(
        result("(no output)\nreal\n[exit code 0]"),
        result("(no output)\n[killed by signal SIGKILL]"),
        result("(no output)\n(no output)\n[exit code 0]"),
    )
    assert shown_[1].splitlines() == [
        "← bash: (no output) real [exit code 0] (3 lines)",
        "← bash: (no output) [killed by signal SIGKILL]",
        "← bash: (no output) (no output) [exit code 0] (3 lines)",
    ]


def test_an_error_results_reason_is_shown_up_to_400_characters() -> None:
    _, err = shown(result("e" * 400, is_error=True), result("f" * 401, is_error=True))
    assert err.splitlines() == [f"✗ bash: {'e' * 400}", f"✗ bash: {'f' * 399}…"]


def test_a_retry_says_why_the_model_call_is_retried() -> None:
    data = {"turn": 1, "step": 1, "attempt": 1, "code": "RATE_LIMIT", "message": "slow\ndown"}
    _, err = shown(("step/retry", data))
    assert err == "↻ retrying the model call (RATE_LIMIT: slow down)\n"


def test_a_retry_after_a_wait_says_how_long() -> None:
    data = {"turn": 1, "step": 1, "attempt": 1, "code": "RATE_LIMIT", "message": "slow down"}
    _, err = shown(("step/retry", {**data, "wait": 7.5}))
    assert err == "↻ retrying the model call in 7.5 s (RATE_LIMIT: slow down)\n"


def test_a_failed_turn_shows_its_reason_tokens_and_error() -> None:
    error = {"code": "TRANSPORT", "message": "connection refused"}
    _, err = shown(turn_end(2, "error", error=error))
    assert err == "[turn 2 error · 12 in / 3 out tokens] TRANSPORT: connection refused\n"


def test_only_the_watched_session_is_shown() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = Renderer(out, err)
    renderer.session_id = "s"
    feed(renderer, chunk("summary of the chat"), turn_end(), session=Session("summariser"))
    assert (out.getvalue(), err.getvalue(), renderer.last_end) == ("", "", None)
    feed(renderer, chunk("answer"), turn_end(), session=Session("s"))
    assert out.getvalue() == "answer\n"
    assert renderer.last_end is not None and renderer.last_end["reason"] == "completed"


def test_json_writes_each_event_as_one_line_of_stdout() -> None:
    session = Session("s")
    out, err = io.StringIO(), io.StringIO()
    renderer = Renderer(out, err, json=True)
    events = [session._append(*chunk("hi\n")), session._append(*turn_end())]
    for event in events:
        renderer.session_event(session, event)
    assert out.getvalue().splitlines() == [event.to_json("s") for event in events]
    assert err.getvalue() == ""


class GoneReader(io.StringIO):
    """A stream whose reader went away: every write fails as a closed pipe does."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


def test_a_closed_output_is_given_up_once_and_the_turns_end_still_counts() -> None:
    out = GoneReader()
    renderer = Renderer(out, io.StringIO(), json=True)
    closed: list[bool] = []
    renderer.on_closed = lambda: closed.append(True)

    feed(renderer, chunk("a"), chunk("b"), turn_end(reason="aborted"))

    assert renderer.closed and closed == [True]
    assert out.writes == 1  # nothing is written after the first failure
    assert renderer.last_end is not None and renderer.last_end["reason"] == "aborted"


def test_a_closed_pipe_is_pointed_at_dev_null_so_later_writes_do_not_fail() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    with open(write_end, "w") as stream:
        renderer = Renderer(stream, io.StringIO(), json=True)
        feed(renderer, chunk("lost"))
        assert renderer.closed
        stream.write("what is still buffered at exit\n")
        stream.flush()


def test_an_output_error_that_is_not_a_closed_pipe_is_said_and_kept() -> None:
    """The command's status comes from ``failed`` (1: the answer is lost); the turn is
    cancelled as for a closed pipe, and nothing more is written."""
    writes: list[str] = []

    class Full(io.StringIO):
        def write(self, text: str) -> int:
            writes.append(text)
            raise OSError(errno.ENOSPC, "No space left on device")

    err = io.StringIO()
    renderer = Renderer(Full(), err)
    cancelled: list[bool] = []
    renderer.on_closed = lambda: cancelled.append(True)
    feed(renderer, chunk("hi"), chunk("there"))
    assert isinstance(renderer.failed, OSError) and renderer.failed.errno == errno.ENOSPC
    assert (renderer.closed, cancelled, writes) == (True, [True], ["hi"])
    assert (
        err.getvalue()
        == "dsh: error: cannot write the output: [Errno 28] No space left on device\n"
    )


def test_each_piece_of_the_answer_is_flushed_as_it_comes() -> None:
    class Flushes(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.flushed: list[str] = []

        def flush(self) -> None:
            self.flushed.append(self.getvalue())

    out, err = Flushes(), Flushes()
    feed(Renderer(out, err), chunk("Hel"), chunk("lo"), turn_end())
    assert out.flushed == ["Hel", "Hello", "Hello\n"]
    assert err.flushed == ["[turn 1 completed · 12 in / 3 out tokens]\n"]


def test_errors_outside_a_turn_are_kept_for_the_exit_status() -> None:
    renderer = Renderer(io.StringIO(), io.StringIO())
    failure = RuntimeError("the session could not be saved")
    renderer.agent_error(agent=None, error=failure)  # type: ignore[arg-type]
    assert renderer.agent_errors == [failure]


def test_steering_taken_into_the_turn_is_a_note_that_ends_the_streamed_line() -> None:
    out, err = shown(
        chunk("word29"),
        ("steering/message", {"content": "stop"}),
        chunk("Stopping."),
        ("steering/message", {"content": "check the tests", "source": "plugin"}),
    )
    assert out == "word29\nStopping.\n"
    assert err == "↪ steered by you: stop\n↪ steered by a plugin: check the tests\n"


def test_a_steer_the_line_editor_showed_only_ends_the_streamed_line() -> None:
    """chat's line editor shows the person's steer when it is sent: taken into the turn
    it is not shown again; another steer with no source (a plugin's agent.steer) is,
    and one left when the turn ended is forgotten (it starts the next turn)."""
    out, err = io.StringIO(), io.StringIO()
    renderer = Renderer(out, err)
    renderer.steers_shown += ["use metric units", "and then stop"]
    steer: Event = ("steering/message", {"content": "use metric units"})
    feed(
        renderer,
        chunk("word29"),
        steer,
        chunk("Metric."),
        ("steering/message", {"content": "from code"}),
        steer,  # the same text again, not shown when sent this time
        turn_end(),
    )
    assert out.getvalue() == "word29\nMetric.\n"
    assert err.getvalue().splitlines()[:2] == [
        "↪ steered by you: from code",
        "↪ steered by you: use metric units",
    ]
    assert renderer.steers_shown == []


def test_a_compaction_that_changed_the_history_is_a_note() -> None:
    def end(outcome: str, reason: str = "threshold") -> Event:
        data = {"reason": reason, "outcome": outcome}
        return "compact/end", {**data, "tokens_before": 12345, "tokens_after": 2345}

    out, err = shown(
        chunk("Hel"),
        end("summarized"),
        end("pruned"),
        end("dropped", "overflow"),  # a refused summary's fallback
        end("skipped"),
        end("failed"),
        end("summarized", "manual"),  # chat's /compact says how it went
    )
    assert out == "Hel\n"
    assert err == (
        "↻ history summarised (threshold): 12,345 → 2,345 tokens\n"
        "↻ history pruned (threshold): 12,345 → 2,345 tokens\n"
        "↻ history cut (overflow): 12,345 → 2,345 tokens "
        "(older messages dropped without a summary)\n"
    )


def test_a_summary_cut_off_by_its_output_limit_says_so_in_the_note() -> None:
    def compacted(truncated: bool) -> list[Event]:
        summary = ("compact/summary", {"summary": "s", "truncated": truncated})
        data = {"reason": "threshold", "outcome": "summarized", "tokens_before": 9000}
        return [summary, ("compact/end", {**data, "tokens_after": 900})]

    _, err = shown(*compacted(True), *compacted(False))
    assert err == (
        "↻ history summarised (threshold): 9,000 → 900 tokens "
        "(summary cut off at max_summary_tokens)\n"
        "↻ history summarised (threshold): 9,000 → 900 tokens\n"
    )


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_in_a_terminal_a_line_end_split_over_two_chunks_is_still_a_line_end() -> None:
    out, err = Terminal(), io.StringIO()
    feed(Renderer(out, err), chunk("one\r"), chunk("\ntwo\r"), chunk("three"))
    assert out.getvalue() == "one\ntwo\\x0dthree"  # a lone \r is shown, not obeyed


def test_in_a_terminal_every_note_shows_control_characters() -> None:
    out, err = Terminal(), io.StringIO()
    error = {"code": "SERVER", "message": "bad\x1b[2Jthing"}
    feed(
        Renderer(out, err),
        (
            "tool/result",
            {"call_id": "c", "name": "to\x1b]0;x\x07ol", "content": "ok", "is_error": False},
        ),
        turn_end(reason="error", error=error),
    )
    assert "\x1b" not in err.getvalue() and "\x07" not in err.getvalue()
    assert "← to\\x1b]0;x\\x07ol: ok" in err.getvalue()
    assert "SERVER: bad\\x1b[2Jthing" in err.getvalue()


def test_an_error_without_a_message_is_said_as_its_code_alone() -> None:
    """A model error with an empty message (``ModelError("SERVER", "")``) read
    ``SERVER: `` in the retry note and the turn's end line."""
    retry = {"turn": 1, "step": 1, "attempt": 1, "code": "SERVER", "message": ""}
    error = {"code": "SERVER", "message": ""}
    _, err = shown(("step/retry", retry), turn_end(reason="error", error=error))
    assert err.splitlines() == [
        "↻ retrying the model call (SERVER)",
        "[turn 1 error · 12 in / 3 out tokens] SERVER",
    ]
