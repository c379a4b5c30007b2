"""Hooks dsh-compaction calls, for other plugins to implement.

dsh adds these specs when it registers the compaction plugin (its ``dsh_hookspecs``).
Implement them with ``@hookimpl(optionalhook=True)``, so your plugin still registers
when compaction is not loaded. Impls may be plain or ``async def`` and may take any
subset of the arguments.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from dsh import hookspec

if TYPE_CHECKING:
    from dsh import Message
    from dsh_compaction._tokens import TokenCounter

__all__ = ["compaction_keep", "compaction_summarize", "compaction_token_counter"]


@hookspec
def compaction_keep(
    agent: Any, messages: Sequence[Message], keep: frozenset[int]
) -> Collection[int] | None:
    """**waterfall** — mark messages that must survive a compaction verbatim.

    Fires when a compaction is planned, with the derived history (``messages``) and the
    indices marked so far (``keep``). Return ``keep`` plus your indices (return a
    superset: dropping another plugin's marks is allowed but rude), or None to add
    none. A kept message that falls in the summarised region is carried into the
    compacted history right after the summary, together with the rest of its tool
    call/result unit. Indices refer to this call's ``messages`` only; mark again on
    every call. A raising impl, or one that returns something other than a collection
    of indices into ``messages`` (a negative one, one past the end, a bool), makes the
    compaction fail (history unchanged; the error names the plugin and its impl, and
    later impls are not called). Marks that leave nothing to compact are warned about
    once per agent, naming the plugins that mark.
    """


@hookspec(firstresult=True)
def compaction_summarize(
    agent: Any, messages: Sequence[Message], previous_summary: str | None
) -> str | None:
    """**firstresult** — write the summary yourself instead of the summariser model.

    Fires once per compaction that summarises, with the messages the summary will
    replace (a previous summary and kept messages excluded) and the previous summary's
    text, if any, to merge in. Return the summary text, or None to let the summariser
    model write it. Runs under the compaction's timeout; a raising impl makes the
    compaction fail (history unchanged), and so does an empty summary or one not
    smaller than what it replaces, unless the request must shrink to fit the context
    window: then the messages it would replace are dropped (the previous summary kept,
    with a note), and the warning names the plugin.
    """


@hookspec(firstresult=True)
def compaction_token_counter(agent: Any, model: str | None) -> TokenCounter | None:
    """**firstresult** — count tokens exactly for ``model`` (the request's model name).

    Return a ``dsh_compaction.TokenCounter`` (``TextTokenCounter(tokenizer_len)`` wraps
    a tokenizer), or None to keep the default heuristic. Asked once per agent and model;
    the counter is then used incrementally.
    """
