"""The local model: a llama.cpp server that dsh builds (once, cached), starts on a free
loopback port for one command, and stops when the command ends."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.harness import Harness
    from dsh.llm.llama import Server

__all__ = ["LOCAL_CONTEXT", "LOCAL_MODEL_ID", "LocalModelError", "start_local"]

#: The local server's context window: dsh's system prompt and built-in tools take about
#: 1,500 tokens, so leave room for a real conversation.
LOCAL_CONTEXT: Final = 8192
#: What the local server serves (its name in requests).
LOCAL_MODEL_ID: Final = "qwen2.5-coder-0.5b-instruct"


class LocalModelError(DshError):
    """The local model could not be built, fetched or started (no compiler, no network, a
    full disk): not a mistake in the command, so ``dsh`` exits with 1, not 2."""

    code = "LOCAL_MODEL"
    exit_status = 1


async def start_local(harness: Harness, name: str = "local", *, why: str = "") -> Server:
    """Build and fetch if needed (progress on stderr, after ``dsh: starting the local
    model (why)``), start the server, and register its model as ``name``. The caller
    stops the returned server."""
    import sys

    from dsh.config import ModelConfig
    from dsh.llm._llama_build import ServerError
    from dsh.llm.providers import build_model

    print("dsh: starting the local model" + (f" ({why})" if why else ""), file=sys.stderr)
    try:
        server = await _start_server()
    except (ServerError, OSError) as exc:
        # building, fetching or starting failed (no compiler, no network, a full disk):
        # one message saying what, instead of a traceback
        raise LocalModelError(
            f"the local model could not start: {exc}; name a model with -m or in dsh.yml "
            "(docs/models.md)"
        ) from exc
    try:
        config = ModelConfig(
            provider="openai-compatible",
            model=LOCAL_MODEL_ID,
            base_url=server.base_url,
            context_window=LOCAL_CONTEXT,
        )
        harness.models.add("local", build_model(name, config, source="-m local", entry=False), name)
    except BaseException:
        server.stop()
        raise
    return server


async def _start_server() -> Server:
    """``llama.start`` in a worker thread. Cancelled (Ctrl-C), it interrupts the build or
    download in progress, whose processes die and whose scratch files go, and waits for
    the thread to unwind before the cancellation goes on (unless it had not begun: it
    then never will): nothing is left running. Each
    call has its own ``Work``: a thread that has not unwound within the wait stays
    stopped, whatever later starts do."""
    import threading

    import anyio

    from dsh.llm import _llama_build, llama

    started: list[Server] = []
    unwound = threading.Event()
    work = _llama_build.Work()
    lock = threading.Lock()
    begun = abandoned = False

    def start() -> Server:
        nonlocal begun
        with lock:  # abandoned first: the start never begins (and nothing waits for it)
            if abandoned:
                raise _llama_build.ServerError("interrupted")
            begun = True
        try:
            with _llama_build.working(work):
                server = llama.start(context=LOCAL_CONTEXT)
            started.append(server)
            return server
        finally:
            unwound.set()

    try:
        return await anyio.to_thread.run_sync(start, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        work.interrupt()
        with lock:
            # cancelled before the worker thread began the start (anyio may then never
            # call it): there is no thread to wait for
            abandoned = True
            wait = begun
        if wait:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(unwound.wait, 60)
        for server in started:  # it came up just as the cancellation did
            server.stop()
        raise
