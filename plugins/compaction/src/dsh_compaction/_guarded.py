"""A token counter a plugin supplied, guarded at use time: a count it fails to make is
made by the heuristic.

The ``compaction_token_counter`` hook is checked when it answers (``_counters.counter_for``);
the counter it returns can still fail later, on some text only (tiktoken's ``encode``
raises on ``<|endoftext|>`` by default) or with a count no estimate can use (negative,
NaN, not an int). Unguarded, that failure left compaction's ``agent_request`` impl and
ended every later turn, the text staying in the history. The heuristic is not guarded:
it cannot fail, and the common path keeps its cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, final

from dsh import Message, ToolSpec
from dsh.errors import exception_words
from dsh_compaction._tokens import HeuristicCounter, TokenCounter, count_of

__all__ = ["GuardedCounter"]

#: called once, at the first failure: (the method that failed, what it did, the error)
OnFailure = Callable[[str, str, Exception], None]


@final
class GuardedCounter:
    """``counter`` (a plugin's), each count it fails to make (raises ``Exception``, or
    returns what is not an int >= 0) made by ``fallback`` instead; the counter is asked
    again for the next count. ``on_failure`` hears of the first failure only."""

    __slots__ = ("_failed", "_on_failure", "counter", "fallback")

    def __init__(
        self, counter: TokenCounter, fallback: HeuristicCounter, on_failure: OnFailure
    ) -> None:
        self.counter = counter
        self.fallback = fallback
        self._on_failure = on_failure
        self._failed = False

    def count_text(self, text: str) -> int:
        return self._count("count_text", text, self.fallback.count_text)

    def count_message(self, message: Message) -> int:
        return self._count("count_message", message, self.fallback.count_message)

    def count_tools(self, tools: Sequence[ToolSpec]) -> int:
        return self._count("count_tools", tools, self.fallback.count_tools)

    def _count(self, method: str, what: Any, fallback: Callable[[Any], int]) -> int:
        try:
            tokens = getattr(self.counter, method)(what)
        except Exception as error:  # a plugin's counter: any failure
            self._fail(method, f"raised {exception_words(error)}", error)
            return fallback(what)
        try:
            return count_of(tokens)
        except (TypeError, ValueError) as wrong:
            self._fail(method, str(wrong), wrong)
        return fallback(what)

    def _fail(self, method: str, did: str, error: Exception) -> None:
        if not self._failed:
            self._failed = True
            self._on_failure(method, did, error)
