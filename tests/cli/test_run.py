"""`dsh run`: one turn against a real (loopback) OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_support import dsh, in_terminal, read_one_line_and_close, signalled_while_asked, text_reply

DSH = [sys.executable, "-m", "dsh.cli"]


def model_arg(server: Any) -> str:
    return f"openai-compatible:tiny@{server.url}"


def test_run_streams_the_answer_and_reports_the_turn(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Hello", ", ", "world.")])
    done = dsh("-m", model_arg(server), "run", "say hello", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, world.\n"
    assert "dsh: model openai-compatible:tiny (chosen with -m)" in done.stderr
    assert "[turn 1 completed · 12 in / 3 out tokens]" in done.stderr
    body = server.bodies()[0]
    assert body["messages"][-1] == {"role": "user", "content": "say hello"}
    assert str(tmp_path) in body["messages"][0]["content"]  # the workspace is in the prompt


def test_run_json_prints_every_session_event(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("ok")])
    done = dsh("-m", model_arg(server), "run", "--json", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["seq"] for e in events] == list(range(len(events)))
    core = [
        e["type"]
        for e in events
        if "/" in e["type"] and not e["type"].startswith(("permission/", "compact/"))
    ]
    assert core[0] == "turn/start" and core[-1] == "turn/end"
    assert events[-1]["data"]["reason"] == "completed"


def test_a_failing_turn_exits_1_with_one_line_and_no_traceback(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    from cli_support import wire

    unreachable = f"openai-compatible:tiny@{wire.closed_port()}"
    done = dsh("-m", unreachable, "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 1
    assert "TRANSPORT" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_model_argument_is_one_clear_line(cli_env: dict[str, str], tmp_path: Path) -> None:
    done = dsh("-m", "nonsense:thing", "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("dsh: error: ")
    assert "unknown provider 'nonsense'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_first_agent_in_dsh_yml_gives_the_prompt_and_options(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "dsh.yml").write_text(
        "agents:\n  - id: helper\n    system_prompt: You are terse.\n    options: {tone: dry}\n"
    )
    server = model_server([text_reply("ok")])
    done = dsh("-m", model_arg(server), "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert server.bodies()[0]["messages"][0] == {"role": "system", "content": "You are terse."}


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_bad_cwd_is_refused_before_anything_runs(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, kind: str
) -> None:
    server = model_server([text_reply("ok")])
    target = tmp_path / "nowhere"
    if kind == "file":
        target.write_text("")
    done = dsh(
        "--cwd", str(target), "-m", model_arg(server), "run", "hi", env=cli_env, cwd=tmp_path
    )
    assert done.returncode == 2
    what = "is not a directory" if kind == "file" else "does not exist"
    assert (
        done.stderr == f"dsh: error: --cwd {str(target)!r}: {what}; give the directory to work in\n"
    )
    assert server.bodies() == []


def test_a_closed_output_pipe_stops_the_run_quietly(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    pieces = [f"word{n} " for n in range(20)]
    server = model_server([text_reply(*pieces, pause=0.1)])
    args = ("-m", model_arg(server), "run", "--json", "hi")
    status, first, err = read_one_line_and_close(*args, env=cli_env, cwd=tmp_path)
    assert json.loads(first)["seq"] == 0  # the pipe closed while the answer streams
    assert status == 141
    assert "Traceback" not in err and "Broken pipe" not in err
    model, *more = err.splitlines()
    assert model == "dsh: model openai-compatible:tiny (chosen with -m)"
    assert [line.split()[:3] for line in more] in ([], [["dsh:", "new", "session"]])


def test_a_mistyped_model_name_lists_the_defined_ones(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([])
    (tmp_path / "dsh.yml").write_text(
        "models:\n"
        + "".join(
            f"  {name}:\n    provider: openai-compatible\n    base_url: {server.url}\n"
            for name in ("fast", "smart")
        )
    )
    done = dsh("-m", "smrt", "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "dsh: error: -m 'smrt': unknown model (models defined: fast, smart); did you mean "
        f"'smart'? Use one of them (config: {tmp_path / 'dsh.yml'}), local, or "
        "provider:model[@base_url].\n"
    )
    assert server.bodies() == []


@pytest.mark.parametrize("prompt", ["", "  \n"])
def test_an_empty_prompt_is_refused(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, prompt: str
) -> None:
    server = model_server([text_reply("ok")])
    done = dsh("-m", model_arg(server), "run", prompt, env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        'dsh: error: run: the prompt is empty; give the text to send (dsh run "list the files")\n'
    )
    assert server.bodies() == []


def test_no_prompt_at_all_says_how_to_give_one_and_piped_input_needs_a_dash(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([])
    done = dsh_fed("-m", model_arg(server), "run", stdin=b"hi\n", env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.decode() == (
        'dsh: error: run: give the prompt (dsh run "list the files"); to send what is '
        "piped in, give -: ... | dsh run -\n"
    )
    assert server.bodies() == []


@pytest.mark.parametrize("command", ["run", "chat"])
def test_the_model_may_also_follow_the_command(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, command: str
) -> None:
    # `dsh run -m MODEL ...`, as llm users write it; the same as `dsh -m MODEL run ...`
    server = model_server([text_reply("ok")])
    words = ["hi"] if command == "run" else []
    done = dsh_fed(
        command, "-m", model_arg(server), *words, stdin=b"hi\n", env=cli_env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "dsh: model openai-compatible:tiny (chosen with -m)" in done.stderr.decode()
    assert len(server.bodies()) == 1


def test_text_that_is_not_valid_unicode_is_shown_escaped(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # a lone surrogate (a JSON "\ud800" escape from the model) cannot be written as UTF-8
    server = model_server([text_reply("bad ", "\ud800", " text")])
    done = dsh("-m", model_arg(server), "run", "hi", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "bad \\ud800 text\n", done.stderr
    assert "Traceback" not in done.stderr and "failed" not in done.stderr


def dsh_fed(
    *args: str, stdin: bytes, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*DSH, *args], env=env, cwd=cwd, input=stdin, capture_output=True, timeout=60
    )


@pytest.mark.parametrize(
    ("words", "sent"),
    [
        (["review", "this", "diff:", "-"], "review this diff:\n\n+new line\n-old line"),
        (["-", "what", "changed?"], "+new line\n-old line\n\nwhat changed?"),
        (["first", "-", "then this"], "first\n\n+new line\n-old line\n\nthen this"),
        (["-"], "+new line\n-old line"),
        (["list", "the files"], "list the files"),  # no -: stdin is not read
    ],
)
def test_a_dash_in_the_prompt_is_the_text_on_stdin(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, words: list[str], sent: str
) -> None:
    server = model_server([text_reply("ok")])
    done = dsh_fed(
        "-m",
        model_arg(server),
        "run",
        *words,
        stdin=b"+new line\n-old line\n",
        env=cli_env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert server.bodies()[0]["messages"][-1] == {"role": "user", "content": sent}


def test_stdin_from_a_windows_editor_is_read_as_its_text(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # a byte order mark is not part of the text; CRLF line ends read as "\n"
    server = model_server([text_reply("ok")])
    stdin = b"\xef\xbb\xbfline one\r\nline two\r\n"
    done = dsh_fed("-m", model_arg(server), "run", "-", stdin=stdin, env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert server.bodies()[0]["messages"][-1] == {"role": "user", "content": "line one\nline two"}


@pytest.mark.parametrize(
    ("words", "stdin", "error"),
    [
        (["-"], b"\xffcaf\xc3", "run: stdin is not UTF-8 text (invalid start byte at byte 0)"),
        (["-", "and", "-"], b"x", "run: - (stdin) is given more than once; stdin can be read once"),
        (["-"], b"\n\n", "run: the prompt is empty"),
    ],
)
def test_stdin_that_cannot_be_the_prompt_is_refused_before_anything_runs(
    model_server: Any,
    cli_env: dict[str, str],
    tmp_path: Path,
    words: list[str],
    stdin: bytes,
    error: str,
) -> None:
    server = model_server([text_reply("ok")])
    done = dsh_fed("-m", model_arg(server), "run", *words, stdin=stdin, env=cli_env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.decode().startswith(f"dsh: error: {error}")
    assert server.bodies() == []


@pytest.mark.plugins("persistence")
def test_sigterm_ends_a_run_with_143_and_the_turn_saved(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # `timeout 60 dsh run ...`, or a supervisor: the way out runs as for Ctrl-C
    server = model_server([text_reply("part of an answer", then="stall")])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    args = ("-m", model_arg(server), "run", "take your time")
    status, err = signalled_while_asked(server, signal.SIGTERM, *args, env=env, cwd=tmp_path)
    assert status == 143, err
    lines = err.splitlines()
    assert "dsh: terminated" in lines
    # the turn was ended, as by Ctrl-C: aborted, or disposed when the agent's disposal
    # reached it first (both orders happen: the two are concurrent)
    assert lines[-1].startswith(("[turn 1 aborted ", "[turn 1 disposed ")), lines
    assert "Traceback" not in err
    (stored,) = Path(cli_env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    events = [json.loads(line) for line in stored.read_text().splitlines()[1:]]
    assert events[-1]["type"] == "turn/end"
    assert events[-1]["data"]["reason"] in ("aborted", "disposed")


@pytest.mark.parametrize("source", ["pipe", "file"])
def test_text_piped_to_a_prompt_without_a_dash_is_not_sent_and_dsh_says_so(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, source: str
) -> None:
    server = model_server([text_reply("ok")])
    (tmp_path / "notes.txt").write_text("some notes\n")
    if source == "pipe":  # written before dsh starts, as `cat notes.txt |` would have
        read, write = os.pipe()
        os.write(write, b"some notes\n")
        os.close(write)
        notes = os.fdopen(read)
    else:
        notes = (tmp_path / "notes.txt").open()
    with notes:
        done = dsh(
            "-m", model_arg(server), "run", "summarise", env=cli_env, cwd=tmp_path, stdin=notes
        )
    assert done.returncode == 0, done.stderr
    assert server.bodies()[0]["messages"][-1]["content"] == "summarise"
    assert "dsh: the text piped in is not sent: put - in the prompt where it goes" in done.stderr


@pytest.mark.parametrize("stdin", ["", None])
def test_no_word_about_stdin_when_nothing_was_piped(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, stdin: str | None
) -> None:
    server = model_server([text_reply("ok")])
    if stdin is None:
        with open("/dev/null") as empty:
            done = dsh("-m", model_arg(server), "run", "hi", env=cli_env, cwd=tmp_path, stdin=empty)
    else:
        done = dsh("-m", model_arg(server), "run", "hi", env=cli_env, cwd=tmp_path, stdin=stdin)
    assert done.returncode == 0, done.stderr
    assert "piped" not in done.stderr


def test_a_line_typed_to_dsh_run_with_no_question_waiting_is_answered(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("slow", ".", ".", ".", ".", pause=0.4)])
    model = f"openai-compatible:tiny@{server.url}"
    env = {**cli_env, "DSH_LOAD_PLUGINS": ""}
    child = in_terminal("-m", model, "run", "go", env=env, cwd=tmp_path)
    child.expect_exact("slow")
    child.sendline("and also this")
    child.expect_exact("(no question is waiting: dsh run takes one prompt)")  # none stored
    child.expect_exact("[turn 1 completed")
    child.expect(pexpect.EOF)
    assert len(server.bodies()) == 1
