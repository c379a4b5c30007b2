"""Support for the command line's tests, imported as ``cli_support`` (its fixtures are
re-exported by tests/cli/conftest.py): the loopback replay server of the provider tests,
run on its own thread so a `dsh` child process can talk to it while the test drives the
terminal."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import pexpect
import pytest
from terminal_reads import keyboard_signals_as_at_a_terminal, read_by

_spec = importlib.util.spec_from_file_location(
    "llm_wire", Path(__file__).parents[1] / "core" / "llm" / "llm_wire.py"
)
assert _spec is not None and _spec.loader is not None
wire = importlib.util.module_from_spec(_spec)
sys.modules["llm_wire"] = wire
_spec.loader.exec_module(wire)


def _event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def text_reply(*pieces: str, pause: float = 0.0, then: str = "end") -> Any:
    """An OpenAI-compatible streamed answer made of ``pieces``."""
    events = [_event({"role": "assistant", "content": ""})]
    events += [_event({"content": piece}) for piece in pieces]
    if then == "end":
        usage = {"prompt_tokens": 12, "completion_tokens": len(pieces), "total_tokens": 0}
        events += [_event({}, "stop"), _event({}, None, usage=usage), b"data: [DONE]\n\n"]
    return wire.sse(events, pause=pause, then=then)


def refused_reply(message: str = "no such thing") -> Any:
    """An OpenAI-compatible error answer that is not retried (400): the turn ends in
    error at once."""
    return wire.error(400, {"error": {"message": message, "type": "invalid_request_error"}})


def tool_call_reply(
    name: str, arguments: dict[str, Any], call_id: str = "call-1", pause: float = 0.0
) -> Any:
    """An OpenAI-compatible streamed answer that calls one tool (``pause`` seconds
    between its events)."""
    raw = json.dumps(arguments)
    call = {"index": 0, "id": call_id, "type": "function"}
    events = [
        _event({"role": "assistant", "content": None}),
        _event({"tool_calls": [{**call, "function": {"name": name, "arguments": ""}}]}),
        _event({"tool_calls": [{"index": 0, "function": {"arguments": raw}}]}),
        _event({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]
    return wire.sse(events, pause=pause)


class ThreadedWire:
    """``WireServer`` on a thread with its own event loop."""

    def __init__(self, replies: list[Any]) -> None:
        self.server = wire.WireServer(replies)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> ThreadedWire:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.__aenter__(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.__aexit__(), self._loop).result(15)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    @property
    def url(self) -> str:
        return str(self.server.url)

    def bodies(self) -> list[Any]:
        return [request.json() for request in self.server.requests]


@pytest.fixture
def model_server() -> Iterator[Any]:
    """``model_server(replies)`` starts a server; it stops at the end of the test."""
    started: list[ThreadedWire] = []

    def start(replies: list[Any]) -> ThreadedWire:
        server = ThreadedWire(replies).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__(None, None, None)


def contents(body: dict[str, Any]) -> list[Any]:
    """The conversation a request carried (each message's content), without its system
    prompt."""
    return [m.get("content") for m in body["messages"] if m["role"] != "system"]


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a `dsh` child: no provider keys, sessions in a temp dir."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["DSH_PERSISTENCE_DIR"] = str(tmp_path / "sessions")
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def editor_env(cli_env: dict[str, str]) -> dict[str, str]:
    """The environment of a chat that uses the line editor, whatever the shell running the
    tests says."""
    env = {k: v for k, v in cli_env.items() if k != "DSH_CHAT_EDITOR"}
    env["TERM"] = "xterm-256color"
    return env


def dsh(
    *args: str,
    env: dict[str, str],
    cwd: Path,
    stdin: str | IO[str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``dsh ARGS`` in a child process, its output captured as text; ``stdin`` is text
    to pipe in, or a file object to read from; ``preexec_fn`` runs in the child before
    dsh does (tests/unprivileged.py's ``child_as_file_modes_say``)."""
    feed: dict[str, Any] = {"input": stdin} if isinstance(stdin, str) else {"stdin": stdin}
    return subprocess.run(
        [sys.executable, "-m", "dsh.cli", *args],
        **feed,
        env=env,
        cwd=cwd,
        preexec_fn=preexec_fn,
        capture_output=True,
        text=True,
        timeout=60,
    )


def stored_session(server: Any, env: dict[str, str], cwd: Path) -> str:
    """The id of a stored session of one turn (``hi``), made by ``dsh run`` on
    ``server``."""
    done = dsh("-m", f"openai-compatible:tiny@{server.url}", "run", "hi", env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stderr.split("dsh: new session ", 1)[1].split()[0]


# -- settings for a plugin that does not run (tests/cli/test_*_config.py) ---------------

SHELL_SECTION = "shell:\n  x: 1\n"  # a section for a plugin that is not installed
IGNORED = "(ignored here: this command starts no agent; dsh run refuses it)\n"


def settings_for_plugins_not_running(left_out: str, line: int) -> pytest.MarkDecorator:
    """Parametrizes a test's ``text`` (a dsh.yml) and ``said`` (where it is wrong, and
    what is said of it): SHELL_SECTION, ``left_out``, whose agent 0 has options for the
    permissions plugin at ``line`` (installed, and left out by the test's env), and an
    entry of ``models:`` that cannot be built (its provider is nobody's)."""
    return pytest.mark.parametrize(
        ("text", "said"),
        [
            (
                SHELL_SECTION,
                "1:1: shell: section 'shell' is for a plugin that is not installed or not loaded",
            ),
            pytest.param(
                left_out,
                f"{line}:7: agents[0].options.permissions: plugin 'permissions' is installed "
                "but not loaded, so nothing would apply these settings",
                marks=pytest.mark.plugins("permissions"),
            ),
            (  # a provider dsh does not build, and no plugin that runs serves it
                "models:\n  m: {provider: nosuchprov, model: x}\n",
                "2:7: models.m.provider: unknown provider 'nosuchprov' (built in: ",
            ),
        ],
        ids=["not-installed", "left-out", "unbuildable-model"],
    )


def written_config(directory: Path, text: str, said: str) -> tuple[Path, str]:
    """``text`` written to ``directory``/dsh.yml, and the start of the warning a command
    that starts no agent gives for it."""
    config = directory / "dsh.yml"
    config.write_text(text)
    return config, f"dsh: {config}:{said}"


def assert_warned(done: subprocess.CompletedProcess[str], warning: str) -> None:
    """A command that starts no agent ran, ``warning`` said and said to be ignored."""
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(warning) and done.stderr.endswith(IGNORED)


def assert_refused(done: subprocess.CompletedProcess[str], config: Path, said: str) -> None:
    """A command that runs a turn refused the file before any model was asked."""
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"dsh: error: {config}:{said}")


def assert_checked(env: dict[str, str], cwd: Path, config: Path, said: str) -> None:
    """`dsh config check` reports the setting as an error."""
    checked = dsh("config", "check", env=env, cwd=cwd)
    assert checked.returncode == 1 and f"{config}:{said}" in checked.stderr


def _piped(*args: str, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """``dsh ARGS`` started with its stdout and stderr on pipes (text)."""
    return subprocess.Popen(
        [sys.executable, "-m", "dsh.cli", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def in_terminal(
    *args: str, env: dict[str, str], cwd: Path, program: Path | None = None
) -> pexpect.spawn:
    """``dsh ARGS`` started in a pseudo-terminal (stdin, stdout and stderr); what it
    writes is kept in ``child.logfile_read`` (a StringIO), for ``screen``. ``program``:
    a Python script run in place of ``dsh`` (one that calls ``dsh.cli.main`` with
    plugins of its own)."""
    child = pexpect.spawn(
        sys.executable,
        [*(["-m", "dsh.cli"] if program is None else [str(program)]), *args],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 200),
        preexec_fn=keyboard_signals_as_at_a_terminal,  # Ctrl-C, Ctrl-\ not ignored
    )
    child.logfile_read = io.StringIO()
    return child


def signalled_while_asked(
    server: Any, signum: int, *args: str, env: dict[str, str], cwd: Path
) -> tuple[int, str]:
    """``dsh ARGS`` sent ``signum`` once it has asked the model (the server stalls):
    its exit status and stderr."""
    process = _piped(*args, env=env, cwd=cwd)
    try:
        deadline = time.monotonic() + 30
        while not server.bodies() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.bodies(), "the model was never asked"
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, err


def read_one_line_and_close(*args: str, env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    """``dsh ARGS | head -1``: the first line of stdout is read, then the pipe closed;
    the exit status, that line and stderr."""
    with _piped(*args, env=env, cwd=cwd) as child:
        assert child.stdout is not None and child.stderr is not None
        first = child.stdout.readline()
        child.stdout.close()
        try:
            status = child.wait(timeout=60)
        finally:
            child.kill()
        return status, first, child.stderr.read()


def chat_uses_editor(env: Mapping[str, str] = os.environ) -> bool:
    """Whether ``dsh chat`` in a pseudo-terminal with ``env`` reads its lines with the
    line editor (dsh/_cli_editor.py line_editor): prompt_toolkit is installed (the
    ``chat`` extra), ``DSH_CHAT_EDITOR`` is not 0/off and TERM is not dumb."""
    return (
        importlib.util.find_spec("prompt_toolkit") is not None
        and env.get("DSH_CHAT_EDITOR", "").strip().lower() not in ("0", "off")
        and env.get("TERM") != "dumb"
    )


def sent_alone(child: pexpect.spawn, line: str) -> None:
    """Type ``line`` and Enter, and return once chat has taken it: with the line editor,
    once the cursor is at the start of an emptied input line below it (a line typed
    before that would come in the same read, and the editor takes lines that arrive
    together as one block, as a paste; so does the canonical reader). Fails after 30
    seconds."""
    child.sendline(line)
    if not chat_uses_editor(child.env):
        # the terminal's echo of the line: it is on the terminal to be read from here on
        child.expect_exact(line + "\r\n")
        read_by(child)
        return
    pyte = pytest.importorskip("pyte")
    deadline = time.monotonic() + 30
    while True:
        view = pyte.Screen(200, 40)
        pyte.Stream(view).feed(child.logfile_read.getvalue())
        x, y = view.cursor.x, view.cursor.y
        if x == 0 and y > 0 and view.display[y - 1].rstrip().endswith(line):
            return
        assert time.monotonic() < deadline, f"{line!r} was never taken"
        child.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=0.1)


#: Terminal control sequences (the line editor redrawing its input line) that may come
#: between two things written: a regular expression.
CONTROLS = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"

#: A chat in a pseudo-terminal:
#: ``chat(server, env=None, plugins=None, canonical=False, program=None)``.
ChatStarter = Callable[..., pexpect.spawn]


@pytest.fixture
def chat(cli_env: dict[str, str], tmp_path: Path) -> Iterator[ChatStarter]:
    """``chat(server, env=None, plugins=None, canonical=False, program=None)`` starts
    ``dsh chat`` in a pseudo-terminal on the test server (``env``: instead of
    ``cli_env``; ``plugins``: load only those; ``canonical``: without the line editor,
    ``DSH_CHAT_EDITOR=0``; ``program``: as ``in_terminal``'s) and returns
    it at its first prompt; every chat started is closed at the end. What it wrote is in
    ``child.logfile_read`` (a StringIO), for ``screen``."""
    children: list[pexpect.spawn] = []

    def start(
        server: Any,
        env: dict[str, str] | None = None,
        plugins: str | None = None,
        canonical: bool = False,
        program: Path | None = None,
    ) -> pexpect.spawn:
        env = dict(cli_env if env is None else env)
        if plugins is not None:
            env["DSH_LOAD_PLUGINS"] = plugins
        if canonical:
            env["DSH_CHAT_EDITOR"] = "0"
        model = f"openai-compatible:tiny@{server.url}"
        child = in_terminal("-m", model, "chat", env=env, cwd=tmp_path, program=program)
        children.append(child)
        child.expect_exact("dsh: model openai-compatible:tiny")
        child.expect_exact("> ")
        return child

    yield start
    for child in children:
        child.close(force=True)


def piped_chat(
    server: Any, stdin: IO[str] | str, env: dict[str, str], cwd: Path, plugins: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``dsh chat`` on the test server, its input from a file object or a string (a
    pipe), with only ``plugins`` loaded when given."""
    if plugins is not None:
        env = {**env, "DSH_LOAD_PLUGINS": plugins}
    model = f"openai-compatible:tiny@{server.url}"
    return dsh("-m", model, "chat", env=env, cwd=cwd, stdin=stdin)
