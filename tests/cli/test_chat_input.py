"""`dsh chat` reading its input from something other than a terminal: a pipe, a regular
file, /dev/null. A line is a prompt; the end of the input quits once the agent is idle;
a turn that ended in error, or a slash command that failed, makes the status 1 (the later
lines still run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import contents, dsh, piped_chat, refused_reply, text_reply, tool_call_reply


@pytest.mark.parametrize("source", ["pipe", "file"])
def test_chat_reads_a_prompt_from_a_pipe_or_a_file(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, source: str
) -> None:
    server = model_server([text_reply("One.")])
    text = "first\n"
    if source == "pipe":
        done = piped_chat(server, text, cli_env, tmp_path)
    else:
        (tmp_path / "in.txt").write_text(text)
        with (tmp_path / "in.txt").open() as stdin:
            done = piped_chat(server, stdin, cli_env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == "One.\n"
    assert [b["messages"][-1]["content"] for b in server.bodies()] == ["first"]


def test_chat_with_empty_input_from_dev_null_just_quits(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([])
    with open("/dev/null") as stdin:
        done = piped_chat(server, stdin, cli_env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert server.bodies() == []


@pytest.mark.parametrize("source", ["pipe", "dev-null"])
def test_chat_with_empty_input_starts_no_model(
    cli_env: dict[str, str], tmp_path: Path, source: str
) -> None:
    # no model configured: the bundled local model would be built and started (minutes);
    # its cache cannot be made here, so starting it would fail the command
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    env = {**cli_env, "DSH_LLAMA_CACHE": str(blocker / "llama"), "PIP_NO_INDEX": "1"}
    if source == "pipe":
        done = dsh("chat", env=env, cwd=tmp_path, stdin="")
    else:
        with open("/dev/null") as stdin:
            done = dsh("chat", env=env, cwd=tmp_path, stdin=stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_piped_lines_are_taken_one_turn_at_a_time(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Lines of a file all arrive at once; each waits for the agent to be idle, as a
    person would: three lines, three turns (not one turn and two steers or a batch)."""
    server = model_server([text_reply("One."), text_reply("Two."), text_reply("Three.")])
    done = piped_chat(server, "first\nsecond\n/queue third\n", cli_env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "One.\nTwo.\nThree.\n"
    users = [
        [m["content"] for m in body["messages"] if m["role"] == "user"] for body in server.bodies()
    ]
    assert users == [["first"], ["first", "second"], ["first", "second", "third"]]


@pytest.mark.parametrize("source", ["pipe", "file"])
def test_a_turn_that_ended_in_error_makes_the_status_1_and_the_next_line_runs(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, source: str
) -> None:
    """A script cannot see the error on stderr: its status says so (docs/cli.md, "`dsh
    chat`"), and the chat goes on with the next line as before."""
    server = model_server([refused_reply(), text_reply("Two.")])
    text = "first\nsecond\n"
    if source == "pipe":
        done = piped_chat(server, text, cli_env, tmp_path, plugins="")
    else:
        (tmp_path / "in.txt").write_text(text)
        with (tmp_path / "in.txt").open() as stdin:
            done = piped_chat(server, stdin, cli_env, tmp_path, plugins="")
    assert done.returncode == 1, done.stderr
    assert "[turn 1 error" in done.stderr and "no such thing" in done.stderr
    assert "[turn 2 completed" in done.stderr
    assert done.stdout == "Two.\n"
    assert "Traceback" not in done.stderr
    assert len(server.bodies()) == 2


def test_an_error_before_the_last_turn_still_makes_the_status_1(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Any turn's error counts, not only the last turn's (as dsh run's one turn)."""
    server = model_server([text_reply("One."), refused_reply(), text_reply("Three.")])
    done = piped_chat(server, "first\nsecond\nthird\n", cli_env, tmp_path, plugins="")
    assert done.returncode == 1, done.stderr
    assert done.stdout == "One.\nThree.\n"
    assert "[turn 2 error" in done.stderr and "[turn 3 completed" in done.stderr


def test_model_shows_the_model_and_says_it_switches_nothing(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([])
    done = piped_chat(server, "/model\n/model fast\n", cli_env, tmp_path, plugins="")
    assert done.returncode == 1, done.stderr  # the switch asked for was refused
    model = "openai-compatible:tiny"
    assert f"  {model}\n" in done.stderr
    assert (
        f"  /model only shows the model ({model}); to go on with another, quit and run "
        "dsh chat -m fast\n"  # no plugin stores the session: a new chat
    ) in done.stderr
    assert server.bodies() == []


# A slash command that failed (its message said why on stderr) is a script's mistake its
# output does not show: the status says so, as for a turn's error; the lines after it run.


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("/nope", "unknown command /nope (try /queue TEXT, /resume ID,"),
        ("/quit now", "/quit takes nothing after it; /quit alone quits"),
        ("/help me", "/help takes nothing after it; try /help alone"),
        ("/plugins all", "/plugins takes nothing after it; try /plugins alone"),
        ("/resume", "/resume needs a session id"),
        ("/resume typo-id", "/resume: no plugin stores sessions ("),
        ("/queue", "/queue needs the text to queue"),
        ("/model fast", "/model only shows the model"),
        ("/compact", "/compact needs the compaction plugin"),
    ],
)
def test_a_failed_command_makes_the_status_1_and_the_next_line_runs(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, line: str, said: str
) -> None:
    server = model_server([text_reply("One."), text_reply("Two.")])
    done = piped_chat(server, f"first\n{line}\nsecond\n", cli_env, tmp_path, plugins="")
    assert done.returncode == 1, done.stderr
    assert said in done.stderr
    assert done.stdout == "One.\nTwo.\n"
    assert "[turn 2 completed" in done.stderr and "Traceback" not in done.stderr


def test_help_lists_the_commands_the_hint_for_an_unknown_one_names(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("One.")])
    done = piped_chat(server, "/help\n/nope\nfirst\n", cli_env, tmp_path, plugins="")
    assert done.stdout == "One.\n"
    listed = done.stderr.split("  unknown command")[0].splitlines()
    usages = [line.split("  ")[1] for line in listed if line.startswith("  /")]
    *commands, slash = usages
    assert commands[:2] == ["/queue TEXT", "/resume ID"] and "/help" in commands
    assert f"(try {', '.join(commands)}; //TEXT sends /TEXT)" in done.stderr
    assert slash == "//TEXT" and listed[-1].endswith("  send /TEXT as a prompt")


def test_commands_that_did_what_was_asked_leave_the_status_0(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("One."), text_reply("Two."), text_reply("Three.")])
    script = "/model\n/plugins\n/help\nfirst\n/queue second\n//etc\n"
    done = piped_chat(server, script, cli_env, tmp_path, plugins="")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "One.\nTwo.\nThree.\n"
    assert contents(server.bodies()[2])[-1] == "/etc"


@pytest.mark.plugins("persistence")
def test_a_failed_resume_makes_the_status_1_and_the_script_goes_on_in_its_session(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Hello.")])
    done = piped_chat(server, "/resume nosuch\nhello\n", cli_env, tmp_path, "persistence")
    assert done.returncode == 1, done.stderr
    said = "/resume: no stored session 'nosuch' (`dsh sessions list` shows them); this chat goes on"
    assert said in done.stderr
    assert (done.stdout, server.bodies()[0]["messages"][-1]["content"]) == ("Hello.\n", "hello")


@pytest.mark.plugins("persistence")
def test_a_resume_of_a_corrupt_session_says_why_in_one_sentence(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The reason is a clause before "this chat goes on" (it read "...as it is.; this")."""
    server = model_server([text_reply("First."), text_reply("Second."), text_reply("Third.")])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    model = f"openai-compatible:tiny@{server.url}"
    assert dsh("-m", model, "run", "hi", env=env, cwd=tmp_path).returncode == 0
    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    lines = stored.read_text().splitlines(keepends=True)
    stored.write_text("".join([*lines[:2], "{not json\n", *lines[3:]]))  # a hole
    done = piped_chat(server, f"/resume {stored.stem}\nagain\n", env, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "was left as it is; this chat goes on\n" in done.stderr, done.stderr


@pytest.mark.plugins("persistence")
def test_a_resume_that_worked_leaves_the_status_0(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("First."), text_reply("Second.")])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    model = f"openai-compatible:tiny@{server.url}"
    assert dsh("-m", model, "run", "hi", env=env, cwd=tmp_path).returncode == 0
    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    done = piped_chat(server, f"/resume {stored.stem[:8]}\nagain\n", env, tmp_path)
    assert done.returncode == 0, done.stderr
    # as at start-up (dsh chat --session ID): what the session began with, and its turns
    assert f"  continuing session {stored.stem} ('hi', 1 turn so far)\n" in done.stderr
    assert done.stdout == "Second.\n"
    assert contents(server.bodies()[1])[-3:] == ["hi", "First.", "again"]


# Empty input asks nothing, but what chat checks before its first line is still checked:
# a script whose input happened to be empty learns of the mistake its input would hit.


@pytest.mark.plugins("persistence")
@pytest.mark.parametrize(
    ("options", "said"),
    [
        ([], "--continue: there is no stored session yet; start one without it"),
        (
            ["-p", "no:persistence"],
            "--continue: no plugin stores sessions (dsh-persistence is installed but "
            "disabled by -p no:persistence",
        ),
    ],
    ids=["no-session", "persistence-off"],
)
def test_chat_continue_with_empty_input_says_there_is_nothing_to_continue(
    cli_env: dict[str, str], tmp_path: Path, options: list[str], said: str
) -> None:
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh(*options, "chat", "--continue", env=env, cwd=tmp_path, stdin="")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"dsh: error: {said}")


@pytest.mark.plugins("persistence")
def test_chat_continue_with_empty_input_finds_the_session_and_changes_nothing(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("Hello.")])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    model = f"openai-compatible:tiny@{server.url}"
    assert dsh("-m", model, "run", "hi", env=env, cwd=tmp_path).returncode == 0
    (stored,) = Path(env["DSH_PERSISTENCE_DIR"]).glob("*.jsonl")
    before = stored.read_bytes()
    for wanted in (["--continue"], ["--session", stored.stem[:8]]):
        done = dsh("-m", model, "chat", *wanted, env=env, cwd=tmp_path, stdin="")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done.stderr
    assert stored.read_bytes() == before
    assert len(server.bodies()) == 1


@pytest.mark.parametrize(
    ("options", "text", "said"),
    [
        ([], "model: nosuch\n", "dsh.yml:1:1: model: unknown model 'nosuch'"),
        (["-m", "smrt"], "", "-m 'smrt': unknown model"),
    ],
    ids=["bad-config", "bad-model"],
)
def test_chat_with_empty_input_still_reports_a_bad_config_or_model(
    cli_env: dict[str, str], tmp_path: Path, options: list[str], text: str, said: str
) -> None:
    (tmp_path / "dsh.yml").write_text(text)
    done = dsh(*options, "chat", env=cli_env, cwd=tmp_path, stdin="")
    assert (done.returncode, done.stdout) == (2, "")
    assert said in done.stderr and done.stderr.startswith("dsh: error: ")


@pytest.mark.plugins("persistence")
def test_plugins_lists_what_dsh_plugins_lists_not_the_commands_own_parts(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """/plugins showed the chat's own hook objects (dsh-cli, dsh-cli-approvals) as
    plugins "(explicit)"; it lists the plugins `dsh plugins` lists, with versions."""
    server = model_server([])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    done = piped_chat(server, "/plugins\n", env, tmp_path, "persistence")
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stderr.splitlines() if line.startswith("  ")]
    table = dsh("plugins", env=env, cwd=tmp_path).stdout.splitlines()[1:]
    assert listed == [row.split()[0] for row in table]
    assert "persistence" in listed and not any(n.startswith("dsh-cli") for n in listed)


@pytest.mark.plugins("permissions")
def test_a_command_at_a_permission_question_is_no_refusal_and_the_question_waits(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """``/help`` typed to decide was the refusal, its text the reason the model read
    (the chat journey review); it is not run, and the next line answers."""
    server = model_server(
        [tool_call_reply("bash", {"command": "echo approved-output"}), text_reply("Done.")]
    )
    done = piped_chat(server, "run it\n/help\ny\n", cli_env, tmp_path, "permissions")
    assert done.returncode == 1, done.stderr  # a command that was not run, in a script
    assert "(a question waits for y, a or n: the command was not run)" in done.stderr
    assert "approved-output" in server.bodies()[1]["messages"][-1]["content"]
    assert "/help" not in str(server.bodies()[1])


@pytest.mark.parametrize("source", ["pipe", "file"])
def test_chat_drops_a_byte_order_mark_before_the_first_line(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path, source: str
) -> None:
    """A file saved with a BOM (Windows editors): its first line is a command still, as
    ``dsh run -`` drops the BOM too; a BOM further on is text."""
    server = model_server([text_reply("One.")])
    text = "\ufeff/model\nfirst \ufeff\n"
    if source == "pipe":
        done = piped_chat(server, text, cli_env, tmp_path)
    else:
        (tmp_path / "in.txt").write_text(text, encoding="utf-8")
        with (tmp_path / "in.txt").open() as stdin:
            done = piped_chat(server, stdin, cli_env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "  openai-compatible:tiny\n" in done.stderr
    assert [b["messages"][-1]["content"] for b in server.bodies()] == ["first \ufeff"]
