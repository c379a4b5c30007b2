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

When the error also gives the server's count of the refused request
(``ModelError.request_tokens``), the window is kept in dsh's estimated tokens: scaled
by the ratio of dsh's estimate of that request to the server's count (within
``MAX_RATIO`` either way), since the threshold check and the plan compare it with
estimates (a heuristic that counts half the server's tokens would otherwise fill the
real window again at every step).

The summariser's own server may state its window too, refusing a summary request
(``_summarise``): that window is kept for the harness's lifetime, per summariser
model name, for the summaries of every agent of the harness (``summariser_window``).
It is not logged: it belongs to the harness's models, not to one session, and a new
process learns it again with one refused summary request.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dsh import ModelError, ModelRequest, get_logger
from dsh.session import SessionEvent
from dsh_compaction import _host

if TYPE_CHECKING:
    from dsh_compaction._state import AgentState

__all__ = [
    "MAX_RATIO",
    "keep_summariser_window",
    "logged_windows",
    "stated_window",
    "summariser_window",
]

log = get_logger("dsh_compaction")

#: the most a server's count of a request may scale dsh's estimate, either way
MAX_RATIO = 3.0


def _scaled(stated: int, counted: object, estimated: object) -> int:
    """``stated`` (the server's tokens) in dsh's estimated tokens: by the ratio of the
    ``estimated`` tokens of a request to the server's ``counted`` ones, when both are
    known, within ``MAX_RATIO``."""
    if type(counted) is not int or type(estimated) is not int or counted <= 0 or estimated <= 0:
        return stated
    ratio = min(max(estimated / counted, 1 / MAX_RATIO), MAX_RATIO)
    return max(int(stated * ratio), 1)


def stated_window(
    agent: _host.Host,
    state: AgentState,
    request: ModelRequest,
    error: ModelError,
    window: int | None,
    configured: int | None,
    estimated: int,
) -> tuple[int | None, dict[str, Any] | None]:
    """The window an overflow's compaction plans with: ``window`` (the one planned with),
    or the one ``error`` states when it is smaller (or ``window`` unknown). A smaller
    one is kept for the agent and the request's model (``AgentState.windows``), the kept
    threshold check is dropped so that the next request's is derived with it, and a
    warning names both. ``configured`` is the window the settings or the model's info
    give (None: neither), which the warning names; ``estimated``, dsh's estimate of the
    refused request (the stated window is scaled to estimated tokens by it and the
    server's count, when given). With it, the record of a window kept
    (``compact/start``'s ``stated``: the model's name, the window, and the server's
    count and dsh's estimate of the request when scaled), else None."""
    stated = error.context_window
    if stated is None:
        return window, None
    scaled = _scaled(stated, error.request_tokens, estimated)
    if window is not None and scaled >= window:
        return window, None
    name = request.model or agent.options.get("model")
    state.windows[name] = scaled
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
    record: dict[str, Any] = {"model": name, "context_window": stated}
    if scaled != stated:
        record |= {"request_tokens": error.request_tokens, "estimated": estimated}
    return scaled, record


def logged_windows(events: Sequence[SessionEvent]) -> dict[str | None, int]:
    """The windows the ``compact/start`` events of a log record as stated (``stated``),
    per model name, the latest one's for each, scaled as the live agent kept them."""
    windows: dict[str | None, int] = {}
    for event in events:
        if event.type != "compact/start":
            continue
        stated = event.data.get("stated")
        if isinstance(stated, dict):
            name, window = stated.get("model"), stated.get("context_window")
            if (name is None or isinstance(name, str)) and type(window) is int and window > 0:
                counted, estimated = stated.get("request_tokens"), stated.get("estimated")
                windows[name] = _scaled(window, counted, estimated)
    return windows


#: the windows summariser servers stated, per harness (while it lives) and model name
_summarisers: weakref.WeakKeyDictionary[Any, dict[str | None, int]] = weakref.WeakKeyDictionary()


def summariser_window(agent: _host.Host, name: str | None) -> int | None:
    """The window the server of the summariser model ``name`` stated for the agent's
    harness (``keep_summariser_window``), None before it stated one."""
    harness = getattr(agent, "harness", None)
    kept = _summarisers.get(harness) if harness is not None else None
    return kept.get(name) if kept is not None else None


def keep_summariser_window(agent: _host.Host, name: str | None, stated: int, planned: int) -> None:
    """Keep ``stated``, the window the server of the summariser model ``name`` stated
    (smaller than the ``planned`` one), for the agent's harness, and say so once."""
    harness = getattr(agent, "harness", None)
    if harness is None:  # an agent outside a harness: for this summary only
        return
    _summarisers.setdefault(harness, {})[name] = stated
    log.warning(
        "summariser model %r: the server says its context window is %s tokens (compaction "
        "planned for %s); compaction plans the summariser's requests with the server's "
        "while the harness runs; set context_window in dsh.yml (the model's entry) to %s",
        name,
        f"{stated:,}",
        f"{planned:,}",
        stated,
    )
