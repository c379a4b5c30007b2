"""The context window a server states when it refuses a request as too long.

A provider's CONTEXT_WINDOW_EXCEEDED may say the model's real window
(``ModelError.context_window``: llama.cpp's "the available context size (2048
tokens)", say). When that is smaller than the window compaction planned with (the
``context_window`` setting, or the model's info), the overflow's compaction plans with
the server's, and the agent keeps it for the model: the threshold check of later
requests uses it too, instead of filling the real window again, each time paying a
refused request and a compaction. The overflow's ``compact/start`` records it
(``stated``), and an agent's state built from a stored log (a resumed or forked
session) starts with the windows recorded there (``logged_windows``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dsh import ModelError, ModelRequest, get_logger
from dsh.session import SessionEvent
from dsh_compaction import _host

if TYPE_CHECKING:
    from dsh_compaction._state import AgentState

__all__ = ["logged_windows", "stated_window"]

log = get_logger("dsh_compaction")


def stated_window(
    agent: _host.Host,
    state: AgentState,
    request: ModelRequest,
    error: ModelError,
    window: int | None,
    configured: int | None,
) -> tuple[int | None, dict[str, Any] | None]:
    """The window an overflow's compaction plans with: ``window`` (the one planned with),
    or the one ``error`` states when it is smaller (or ``window`` unknown). A smaller
    one is kept for the agent and the request's model (``AgentState.windows``), the kept
    threshold check is dropped so that the next request's is derived with it, and a
    warning names both. ``configured`` is the window the settings or the model's info
    give (None: neither), which the warning names. With it, the record of a window kept
    (``compact/start``'s ``stated``: the model's name and the window), else None."""
    stated = error.context_window
    if stated is None or (window is not None and stated >= window):
        return window, None
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
    return stated, {"model": name, "context_window": stated}


def logged_windows(events: Sequence[SessionEvent]) -> dict[str | None, int]:
    """The windows the ``compact/start`` events of a log record as stated (``stated``),
    per model name, the latest one's for each (as the live agent kept them)."""
    windows: dict[str | None, int] = {}
    for event in events:
        if event.type != "compact/start":
            continue
        stated = event.data.get("stated")
        if isinstance(stated, dict):
            name, window = stated.get("model"), stated.get("context_window")
            if (name is None or isinstance(name, str)) and type(window) is int and window > 0:
                windows[name] = window
    return windows
