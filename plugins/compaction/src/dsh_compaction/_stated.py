"""The context window a server states when it refuses a request as too long.

A provider's CONTEXT_WINDOW_EXCEEDED may say the model's real window
(``ModelError.context_window``: llama.cpp's "the available context size (2048
tokens)", say). When that is smaller than the window compaction planned with (the
``context_window`` setting, or the model's info), the overflow's compaction plans with
the server's, and the agent keeps it for the model: the threshold check of later
requests uses it too, instead of filling the real window again, each time paying a
refused request and a compaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh import ModelError, ModelRequest, get_logger
from dsh_compaction import _host

if TYPE_CHECKING:
    from dsh_compaction._state import AgentState

__all__ = ["stated_window"]

log = get_logger("dsh_compaction")


def stated_window(
    agent: _host.Host,
    state: AgentState,
    request: ModelRequest,
    error: ModelError,
    window: int | None,
    configured: int | None,
) -> int | None:
    """The window an overflow's compaction plans with: ``window`` (the one planned with),
    or the one ``error`` states when it is smaller (or ``window`` unknown). A smaller
    one is kept for the agent and the request's model (``AgentState.windows``), the kept
    threshold check is dropped so that the next request's is derived with it, and a
    warning names both. ``configured`` is the window the settings or the model's info
    give (None: neither), which the warning names."""
    stated = error.context_window
    if stated is None or (window is not None and stated >= window):
        return window
    name = request.model or agent.options.get("model")
    state.windows[name] = stated
    state.check = None
    said = f"{configured:,} tokens" if configured is not None else "unknown"
    log.warning(
        "agent %r: model %r: the server says its context window is %s tokens (the "
        "configured one: %s); compaction plans with the server's from now on; set "
        "context_window in dsh.yml (the model's entry, or compaction:) to %s",
        agent.id,
        name,
        f"{stated:,}",
        said,
        stated,
    )
    return stated
