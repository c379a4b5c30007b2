"""The messages a compaction keeps verbatim: the turn's task, then what plugins mark
(``compaction_keep``), each impl's result checked as it returns it; and, when that
leaves nothing to compact, the words that blame the plugins' marks."""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Collection, Sequence

from dsh import Message
from dsh_compaction import _host
from dsh_compaction._settings import CompactionSettings
from dsh_compaction._state import AgentState
from dsh_compaction._task import task_marks

__all__ = ["HOOK", "blame", "marks", "nothing"]

HOOK = "compaction_keep"


async def marks(
    agent: _host.Host,
    state: AgentState,
    settings: CompactionSettings,
    history: Sequence[Message],
    counts: Sequence[int],
    tail_budget: int,
    first: int,
) -> tuple[frozenset[int], frozenset[int]]:
    """``(task, keep)``: the turn's task (from ``first``: past a summary), and the
    messages to keep verbatim, the task and what plugins mark; their tokens come out of
    the tail budget (``charged``). A plugin's wrong result (see ``_wrong``) is the
    failure of its impl: a ``HookError`` naming the plugin and its impl."""
    task: frozenset[int] = frozenset()
    if settings.keep_last_user_message:
        events = agent.session.events
        task = frozenset(task_marks(events, history, counts, tail_budget, state.turn_task, first))
    marked = await _host.call_waterfall(
        agent, HOOK, "keep", _wrong(len(history)), messages=history, keep=task
    )
    return task, frozenset(marked)


def _wrong(count: int) -> Callable[[object], str | None]:
    """What is wrong with a ``compaction_keep`` result for ``count`` messages (None: a
    collection of their indices). An index outside them, or a bool (an ``int`` that
    marks message 0 or 1), is a plugin's bug, not dropped in silence."""

    def wrong(marked: object) -> str | None:
        if not isinstance(marked, Collection) or not all(isinstance(i, int) for i in marked):
            return f"returned {reprlib.repr(marked)}, not a collection of indices"
        if any(isinstance(i, bool) for i in marked):
            return f"returned {reprlib.repr(marked)}: a bool is no index (True marks message 1)"
        outside = sorted(i for i in marked if not 0 <= i < count)
        if outside:
            among = f" (0 to {count - 1})" if count else ""
            return (
                f"returned indices outside the {count} messages it was given{among}: "
                f"{reprlib.repr(outside)}"
            )
        return None

    return wrong


def blame(agent: _host.Host) -> str:
    """Why nothing is left to compact when the marks of plugins are why: their names
    (every plugin with a ``compaction_keep`` impl: the marks are one set, whoever added
    each)."""
    plugins = list(dict.fromkeys(impl.plugin_name for impl in _host.impls(agent, HOOK)))
    whose = ""
    if plugins:
        whose = f" of plugin{'s' if len(plugins) > 1 else ''} {', '.join(map(repr, plugins))}"
    return f"the {HOOK} marks{whose} keep every message a summary would replace"


def nothing(why: str | None) -> dict[str, str]:
    """The error of a compaction with nothing to compact (``NOTHING``); ``why``: the
    plugins' marks are why (``blame``)."""
    return {"code": "NOTHING", "message": "nothing to compact" + (f": {why}" if why else "")}
