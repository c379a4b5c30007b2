"""dsh-compaction: keep long sessions inside the model's context window.

Before each model call (``agent_request``) the request's tokens are estimated,
incrementally; past ``threshold`` of the context window the older history is compacted:
bulky old tool results are pruned first (no model call), and if that is not enough the
older region is summarised by a model, keeping a recent tail verbatim and never
separating a tool call from its result. A provider's context-window error compacts
once and retries the step (``agent_request_error``). Every change is logged as
``compact/*`` events that history reducers replay, so a resumed session derives the
same compacted history. See docs/compaction.md.

dsh imports this module on every start, ``dsh --help`` included, so it imports nothing
heavy: the hookimpls below load the compaction code (and pydantic with it) on first
use, and the public names load when they are first looked up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dsh import hookimpl
from dsh_compaction import hookspecs as dsh_hookspecs

if TYPE_CHECKING:
    from dsh import ModelError, ModelRequest, RequestErrorDecision
    from dsh_compaction._events import END, PRUNE, START, SUMMARY, SUMMARY_HEADER
    from dsh_compaction._plugin import compact_now
    from dsh_compaction._result import CompactionResult
    from dsh_compaction._settings import CompactionSettings
    from dsh_compaction._summarise import DEFAULT_PROMPT
    from dsh_compaction._tokens import (
        HeuristicCounter,
        RequestEstimator,
        TextTokenCounter,
        TokenCounter,
    )

__all__ = [
    "DEFAULT_PROMPT",
    "END",
    "PRUNE",
    "START",
    "SUMMARY",
    "SUMMARY_HEADER",
    "CompactionResult",
    "CompactionSettings",
    "HeuristicCounter",
    "RequestEstimator",
    "TextTokenCounter",
    "TokenCounter",
    "agent_disposed",
    "agent_request",
    "agent_request_error",
    "compact_now",
    "dsh_hookspecs",
    "register_chat_commands",
    "register_history_reducers",
    "register_settings",
]

_PUBLIC = {
    "CompactionResult": "dsh_compaction._result",
    **dict.fromkeys(
        ("END", "PRUNE", "START", "SUMMARY", "SUMMARY_HEADER"), "dsh_compaction._events"
    ),
    "compact_now": "dsh_compaction._plugin",
    "CompactionSettings": "dsh_compaction._settings",
    "DEFAULT_PROMPT": "dsh_compaction._summarise",
    **dict.fromkeys(
        ("HeuristicCounter", "RequestEstimator", "TextTokenCounter", "TokenCounter"),
        "dsh_compaction._tokens",
    ),
}


if not TYPE_CHECKING:  # a type checker sees the imports above: a typo is an error

    def __getattr__(name: str) -> Any:
        module = _PUBLIC.get(name)
        if module is None:
            raise AttributeError(f"module 'dsh_compaction' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


# Not ``_plugin``: importing the submodule of that name would overwrite it.
_loaded: ModuleType | None = None


def _impls() -> Any:
    global _loaded
    if _loaded is None:
        _loaded = importlib.import_module("dsh_compaction._plugin")
    return _loaded


@hookimpl
def register_settings(register: Callable[..., None]) -> None:
    """The ``compaction:`` section of ``dsh.yml``."""
    _impls().register_settings(register)


@hookimpl
def register_history_reducers(register: Callable[..., None]) -> None:
    """The reducers of ``compact/summary`` and ``compact/prune``."""
    _impls().register_history_reducers(register)


@hookimpl
def register_chat_commands(register: Callable[..., None]) -> None:
    """``/compact`` in ``dsh chat``."""
    from dsh_compaction._chat import register_chat_commands

    register_chat_commands(register)


@hookimpl
def agent_disposed(agent: Any) -> None:
    """Forget the agent's state."""
    _impls().agent_disposed(agent)


@hookimpl(tryfirst=True)
async def agent_request(
    agent: Any, request: ModelRequest, turn: int, step: int
) -> ModelRequest | None:
    """Over the threshold, compact, then send the request rebuilt from the compacted
    history. ``tryfirst``: later impls see (and may still trim) the compacted request."""
    impls = _loaded or _impls()
    if impls.within(agent, request, turn, step):  # the common case: no coroutine of its own
        return None
    result: ModelRequest | None = await impls.agent_request(agent, request, turn, step)
    return result


@hookimpl
async def agent_request_error(
    agent: Any, request: ModelRequest, error: ModelError, turn: int, step: int
) -> RequestErrorDecision | None:
    """The provider said the request does not fit: compact once and retry the step."""
    result: RequestErrorDecision | None = await _impls().agent_request_error(
        agent, request, error, turn, step
    )
    return result
