"""Token estimates: pluggable counters, and the incremental estimate of a request.

The trigger runs before every model call, so it must not re-count a long history each
step. ``RequestEstimator`` remembers the messages it counted (by identity: derived
history only ever grows by appending, until a compaction replaces it) and counts only
the new ones; system prompt and tools are cached until they change. A request whose
messages an earlier plugin changed (a note appended to each request) is measured
against the session history it was built from: the messages it shares with that
history come from the kept counts, and only the plugin's own are counted anew.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from itertools import compress, count, repeat
from operator import is_, is_not
from typing import Final, Protocol, final, runtime_checkable

from dsh import (
    AssistantMessage,
    Message,
    ModelRequest,
    ProviderBlock,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from dsh.session import HistoryView

__all__ = [
    "HeuristicCounter",
    "RequestEstimator",
    "TextTokenCounter",
    "TokenCounter",
    "count_of",
    "json_text",
]

_TEXTUAL: Final = (TextBlock, ReasoningBlock)  # a tuple: ``A | B`` is built per call


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens as a model would see them. Return a counter from the
    ``compaction_token_counter`` hook to replace the default heuristic."""

    def count_text(self, text: str) -> int: ...

    def count_message(self, message: Message) -> int: ...

    def count_tools(self, tools: Sequence[ToolSpec]) -> int: ...


def json_text(data: object) -> str:
    """``data`` as the request sends it: compact JSON, non-ASCII characters as they are."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def count_of(tokens: object) -> int:
    """``tokens`` as a count (an int >= 0, not a bool; an int subclass's as a plain
    int), else a ``TypeError`` (not an int) or ``ValueError`` (negative) saying it. A
    call for each count: a hot path tests ``type(tokens) is int and tokens >= 0``
    before it (``_checked``)."""
    if isinstance(tokens, int) and type(tokens) is not bool:
        if tokens >= 0:
            return tokens if type(tokens) is int else int(tokens)
        raise ValueError(f"returned {tokens!r}, not a count of tokens (an int >= 0)")
    raise TypeError(f"returned {tokens!r}, not a count of tokens (an int >= 0)")


def _checked(count_text: Callable[[str], int]) -> Callable[[str], int]:
    """``count_text``, raising ``count_of``'s error for a count it gets wrong: the
    overheads added to it would turn ``True`` or ``-1`` into a count that looks right."""

    def count(text: str) -> int:
        tokens = count_text(text)
        if type(tokens) is int and tokens >= 0:  # the common case, without a call
            return tokens
        try:
            return count_of(tokens)
        except (TypeError, ValueError) as wrong:
            raise type(wrong)(f"the function it counts with {wrong}") from None

    return count


class TextTokenCounter:
    """A ``TokenCounter`` built on a function counting the tokens of a text: a message
    costs its text parts plus a fixed overhead for its framing (role, ids); a
    provider's own block (``ProviderBlock``: a server tool's call or results) costs its
    JSON text and a call's overhead.

    For exact counts wrap a tokenizer, one that takes any text: with tiktoken,
    ``TextTokenCounter(lambda s: len(enc.encode(s, disallowed_special=())))`` (its
    default raises on ``<|endoftext|>`` in the text; a count that fails is made by the
    heuristic, with a warning).
    """

    def __init__(
        self,
        count_text: Callable[[str], int],
        *,
        message_overhead: int = 4,
        call_overhead: int = 8,
    ) -> None:
        # the heuristic (final, its own function) cannot fail: its path keeps its cost
        trusted = isinstance(self, HeuristicCounter)
        self._count_text = count_text if trusted else _checked(count_text)
        self.message_overhead = message_overhead
        self.call_overhead = call_overhead

    def count_text(self, text: str) -> int:
        return self._count_text(text)

    def count_message(self, message: Message) -> int:
        count = self._count_text
        tokens = self.message_overhead
        # The exact (disjoint) classes first: an ``isinstance`` of a model class that
        # fails runs ABCMeta's check, a Python call; subclasses take the ``isinstance``s.
        if type(message) is UserMessage:
            return tokens + count(message.content)
        if type(message) is AssistantMessage or isinstance(message, AssistantMessage):
            for block in message.content:
                if type(block) is TextBlock or type(block) is ReasoningBlock:
                    tokens += count(block.text)
                elif type(block) is ToolCall:
                    tokens += self.call_overhead + count(block.name) + count(block.arguments)
                elif isinstance(block, _TEXTUAL):
                    tokens += count(block.text)
                elif isinstance(block, ToolCall):
                    tokens += self.call_overhead + count(block.name) + count(block.arguments)
                elif isinstance(block, ProviderBlock):  # the provider gets it back whole
                    tokens += self.call_overhead + count(json_text(block.data))
        elif type(message) is ToolResultMessage or isinstance(message, ToolResultMessage):
            tokens += count(message.content) + count(message.name)
        else:
            tokens += count(message.content)
        return tokens

    def count_tools(self, tools: Sequence[ToolSpec]) -> int:
        count = self._count_text
        return sum(
            self.call_overhead
            + count(spec.name)
            + count(spec.description)
            + count(json_text(spec.parameters))
            for spec in tools
        )


@final
class HeuristicCounter(TextTokenCounter):
    """The default: about ``chars_per_token`` characters per token (UTF-8 bytes for
    non-ASCII text, so CJK and emoji are not undercounted). No dependencies, fast, and
    within ~20 % for English prose and code; line-numbered tool output and digit-heavy
    data can take 20-50 % more (the threshold and the overflow retry cover the error)."""

    def __init__(self, chars_per_token: float = 4.0, *, message_overhead: int = 4) -> None:
        self.chars_per_token = chars_per_token
        super().__init__(self._estimate, message_overhead=message_overhead)

    def _estimate(self, text: str) -> int:
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        return math.ceil(size / self.chars_per_token)


@final
class RequestEstimator:
    """The token estimate of a request, counted incrementally across steps."""

    __slots__ = ("_counts", "_fixed", "_fixed_key", "_seen", "_total", "_view", "counter")

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._seen: list[Message] = []  # the messages counted, in order
        self._counts: list[int] = []
        self._total = 0
        self._fixed_key: tuple[str, tuple[ToolSpec, ...]] | None = None
        self._fixed = 0
        self._view: HistoryView | None = None  # the session history last counted, if any

    def request(self, request: ModelRequest, history: Sequence[Message] | None = None) -> int:
        """System prompt + tools + messages of ``request``. ``history``: the session
        history the request was built from, when an earlier plugin changed its messages
        (see ``edited``); the kept counts then stay those of ``history``."""
        fields = request.__dict__  # one read: each attribute of a model costs a lookup
        system = fields["system"]
        tools = fields["tools"]
        key = self._fixed_key  # the same objects as last time: their count is kept
        if key is not None and key[0] is system and key[1] is tools:
            fixed = self._fixed
        else:
            fixed = self.fixed(system, tools)
        messages = fields["messages"]
        if history is not None:
            return fixed + self.edited(messages, history)[0]
        last = self._view
        if last is not None and isinstance(messages, HistoryView) and messages.continues(last):
            # the history only grew since it was last counted: count the new messages
            # (``_sync``'s common case, without its checks)
            known = len(self._seen)
            size = len(messages)
            self._view = messages
            if size != known:
                self._add(messages[known:size])
            return fixed + self._total
        self._sync(messages)
        return fixed + self._total

    def fixed(self, system: str, tools: tuple[ToolSpec, ...]) -> int:
        """The tokens of the system prompt and the tools (cached until they change)."""
        key = self._fixed_key
        if (
            key is None
            or (key[0] is not system and key[0] != system)
            or (key[1] is not tools and key[1] != tools)
        ):
            counter = self.counter
            self._fixed = counter.count_text(system) + counter.count_tools(tools)
            self._fixed_key = (system, tools)
        return self._fixed

    def messages(self, messages: Sequence[Message]) -> int:
        """The tokens of ``messages``; counts only those not seen before."""
        self._sync(messages)
        return self._total

    def counts(self, messages: Sequence[Message]) -> list[int]:
        """Per-message token counts of ``messages`` (a list the estimator owns: read it,
        do not keep it)."""
        self._sync(messages)
        return self._counts

    def edited(self, messages: Sequence[Message], history: Sequence[Message]) -> tuple[int, int]:
        """The tokens of ``messages``, which a plugin made from ``history`` (appended a
        note, say), and the tokens of the messages it holds that ``history`` does not.

        The messages ``messages`` shares with ``history`` at its start and at its end
        (the same objects, matched as ``_edits.carry_edit`` matches them), and the rest
        of ``history`` when ``messages`` holds it in a row (a note before the history
        and one after it), are counted from the kept counts of ``history``, which stay
        kept (``history`` only grows from one request to the next); the others are
        counted anew. Finding them compares object identities, at C speed: about as
        cheap as the plugin's own copy of the messages."""
        self._sync(history)
        n, m = len(history), len(messages)
        start = _same(messages, history, min(n, m))
        if start == n:  # the whole history, then the plugin's messages (if any)
            new = messages[n:]
            dropped = 0
        else:
            rest = min(n, m) - start
            end = _same(reversed(messages[start:]), reversed(history[start:]), rest)
            new = messages[start : m - end]
            kept = history[start : n - end]
            at = _run(new, kept)
            if at is None:  # changed, or dropped: counted anew
                dropped = sum(self._counts[start : n - end])
            else:  # kept as they are, between messages of the plugin's (before and after)
                new = [*new[:at], *new[at + len(kept) :]]
                dropped = 0
        added = sum(map(self.counter.count_message, new))
        return self._total - dropped + added, added

    def invalidate(self) -> None:
        """Forget every count (after the history was replaced)."""
        self._seen = []
        self._counts = []
        self._total = 0
        self._view = None

    def _sync(self, messages: Sequence[Message]) -> None:
        seen = self._seen
        known = len(seen)
        size = len(messages)
        view = messages if isinstance(messages, HistoryView) else None
        last = self._view
        if known:
            # A session's history grows by appending until a reducer replaces it (a
            # compaction, another plugin's edit anywhere in it): the view says which. Any
            # other sequence (a request a plugin rebuilt) is compared at its ends.
            if view is not None and last is not None:
                stale = not view.continues(last)
            else:
                stale = (
                    size < known
                    or messages[0] is not seen[0]
                    or messages[known - 1] is not seen[-1]
                )
            if stale:
                self.invalidate()
                known = 0
        self._view = view
        if known == size:
            return
        self._add(messages[known:size])  # copies only the new messages

    def _add(self, new: Sequence[Message]) -> None:
        """Count ``new``, the messages after those counted."""
        added = list(map(self.counter.count_message, new))
        self._seen.extend(new)
        self._counts.extend(added)
        self._total += sum(added)


def _same(a: Iterable[Message], b: Iterable[Message], shorter: int) -> int:
    """How many messages ``a`` and ``b`` (``shorter``: the length of the shorter) start
    with that are the same objects (compared at C speed: no Python loop per message)."""
    return next(compress(count(), map(is_not, a, b)), shorter)


def _run(messages: Sequence[Message], run: Sequence[Message]) -> int | None:
    """Where ``messages`` holds the (non-empty) ``run`` as the same objects in a row."""
    if not run:
        return None
    at = next(compress(count(), map(is_, repeat(run[0]), messages)), None)
    if at is None or len(messages) - at < len(run):
        return None
    return at if _same(messages[at:], run, len(run)) == len(run) else None
