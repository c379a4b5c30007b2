"""dsh-compaction: keep long sessions inside the model's context window.

Before each model call (``agent_request``) the request's tokens are estimated,
incrementally; past ``threshold`` of the context window the older history is compacted:
bulky old tool results are pruned first (no model call), and if that is not enough the
older region is summarised by a model, keeping a recent tail verbatim and never
separating a tool call from its result. A provider's context-window error compacts
once and retries the step (``agent_request_error``). Every change is logged as
``compact/*`` events that history reducers replay, so a resumed session derives the
same compacted history. See docs/compaction.md.
"""

from __future__ import annotations

from dsh_compaction import hookspecs as dsh_hookspecs
from dsh_compaction._compact import CompactionResult
from dsh_compaction._events import END, PRUNE, START, SUMMARY, SUMMARY_HEADER
from dsh_compaction._plugin import (
    agent_disposed,
    agent_request,
    agent_request_error,
    compact_now,
    register_history_reducers,
    register_settings,
)
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
    "register_history_reducers",
    "register_settings",
]
