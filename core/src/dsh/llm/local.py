"""The local model: a llama.cpp server that dsh builds (once, cached), starts on a free
loopback port for one command, and stops when the command ends."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from dsh.harness import Harness
    from dsh.llm.llama import Server

__all__ = ["LOCAL_CONTEXT", "LOCAL_MODEL_ID", "start_local"]

#: The local server's context window: dsh's system prompt and built-in tools take about
#: 1,500 tokens, so leave room for a real conversation.
LOCAL_CONTEXT: Final = 8192
#: What the local server serves (its name in requests).
LOCAL_MODEL_ID: Final = "qwen2.5-coder-0.5b-instruct"


async def start_local(harness: Harness, name: str = "local") -> Server:
    """Build and fetch if needed (progress on stderr), start the server, and register its
    model as ``name``. The caller stops the returned server."""
    import anyio

    from dsh.config import ModelConfig
    from dsh.errors import DshError
    from dsh.llm import llama
    from dsh.llm._llama_build import ServerError
    from dsh.llm.providers import build_model

    try:
        server = await anyio.to_thread.run_sync(lambda: llama.start(context=LOCAL_CONTEXT))
    except (ServerError, OSError) as exc:
        # building, fetching or starting failed (no compiler, no network, a full disk):
        # one message saying what, instead of a traceback
        raise DshError(
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
        harness.models.add("local", build_model(name, config, source="-m local"), name)
    except BaseException:
        server.stop()
        raise
    return server
