"""What a compaction would do to a history: a pure plan, computed before anything is
logged or any model is called."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from dsh import (
    AssistantMessage,
    Message,
    ReasoningBlock,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from dsh_compaction._boundaries import choose_cut, cut_points, units
from dsh_compaction._events import prune_stub, summary_message, too_large_stub
from dsh_compaction._tokens import TokenCounter

__all__ = [
    "Plan",
    "Prune",
    "last_user_message",
    "plan_compaction",
    "tail_budget",
    "too_large",
    "turn_opening",
]


@dataclass(frozen=True, slots=True)
class Prune:
    """A bulky old tool result to replace by ``stub``; ``saves`` tokens."""

    index: int
    call_id: str
    stub: str
    saves: int


@dataclass(frozen=True, slots=True)
class Plan:
    """Replace ``history[:cut]`` by a summary message followed by ``history[i] for i in
    kept``. ``summarised`` are the indices the summary covers (without a previous
    summary at index 0, whose text ``previous`` is merged instead)."""

    cut: int
    previous: str | None
    kept: tuple[int, ...]
    summarised: tuple[int, ...]
    prune: tuple[Prune, ...]
    #: tokens of what the summary stands for: the summarised messages + previous summary
    replaced_tokens: int
    #: the turn's first step (with its results), kept for its reasoning
    #: (``turn_opening``): among ``kept``, charged to the tail budget
    opening: tuple[int, ...] = ()
    #: tokens of an empty summary message: the least a summary takes
    empty: int = 0

    @property
    def prune_saves(self) -> int:
        return sum(p.saves for p in self.prune)


def tail_budget(tail_tokens: int | None, tail_ratio: float, window: float, room: float) -> int:
    """The tokens of recent history kept verbatim: ``tail_tokens``, else ``tail_ratio``
    of the ``window``, and either way at most half the ``room`` the history has below
    the limit, which leaves the other half to summarise now and to grow into before the
    next compaction (a tail as large as the room would leave nothing to compact)."""
    wanted = tail_tokens or tail_ratio * window
    return int(min(wanted, room / 2))


def last_user_message(history: Sequence[Message], first: int = 0) -> int | None:
    """The index of the latest user (or steering) message from ``first`` on (1: past
    the summary the history opens with)."""
    for index in range(len(history) - 1, first - 1, -1):
        if isinstance(history[index], UserMessage):
            return index
    return None


def _opens_with_reasoning(message: Message) -> bool:
    return (
        isinstance(message, AssistantMessage)
        and bool(message.content)
        and isinstance(message.content[0], ReasoningBlock)
    )


def turn_opening(history: Sequence[Message], cut: int, first: int = 0) -> int | None:
    """The assistant message that opens the current turn with reasoning, when a tail
    from ``cut`` starts later in that turn at a message without reasoning; else None.

    A model that thinks once per turn (Anthropic without interleaved thinking) thinks
    in the turn's first step only, and Anthropic refuses a tool loop whose run of
    assistant messages since the last user message does not start with that thinking:
    the message is kept (with its results) rather than summarised."""
    latest = last_user_message(history, first)
    start = first if latest is None else latest + 1
    if not start < cut < len(history) or _opens_with_reasoning(history[cut]):
        return None
    for index in range(start, cut):
        if isinstance(history[index], AssistantMessage):
            return index if _opens_with_reasoning(history[index]) else None
    return None


def plan_compaction(
    history: Sequence[Message],
    counts: Sequence[int],
    *,
    tail_budget: int,
    keep: Iterable[int],
    prune_chars: int,
    counter: TokenCounter,
    summary: str | None,
    charged: Collection[int] = (),
) -> Plan | None:
    """The plan for ``history`` (with per-message token ``counts``), or None when there
    is nothing to compact: no cut point leaves an older region with anything but a
    previous summary and messages marked to keep, or what would be summarised is too
    small for any summary message to be smaller. The reasoning that opens a turn the
    cut falls in is kept with the tail's start (see ``turn_opening``), charged like
    ``charged``, and its bulky results pruned like the summarised ones. ``charged``:
    the messages of ``keep`` whose tokens come out of ``tail_budget`` (``compact``
    charges them all: the turn's task and what plugins mark). ``summary``: the text of
    the summary the history opens with, as the log says (``opening_summary``), merged
    into the new one; None: it opens with none (a user message that merely starts
    with ``SUMMARY_HEADER`` is the user's)."""
    previous = summary
    first = 1 if previous is not None else 0
    keep = set(keep)
    # the kept messages ``charged`` take their tokens out of the tail
    # budget, once: wherever they end up, before the cut or in the tail
    charged = {i for i in charged if i in keep and 0 <= i < len(counts)}
    cut = _cut(history, counts, charged, tail_budget, first)
    if cut is None:
        return None
    opening: set[int] = set()
    if (start := turn_opening(history, cut, first)) is not None:
        # the turn's first step, kept too: its tokens come out of the budget as a
        # marked message's do (a tail planned without it takes the room to grow into)
        opening = units(history, {start}) - keep
        cut = _cut(history, counts, charged | opening, tail_budget, first)
        assert cut is not None  # a later point than before, at the latest the last one
        if turn_opening(history, cut, first) is None:
            opening = set()  # the tail now starts at a step with reasoning of its own
    marked = {i for i in keep | opening if first <= i < cut}
    kept = sorted(i for i in units(history, marked) if first <= i < cut)
    kept_set = set(kept)
    summarised = tuple(i for i in range(first, cut) if i not in kept_set)
    if not summarised:
        return None
    prune: list[Prune] = []
    if prune_chars > 0:
        # the first step's results too: a signature covers its reasoning, not them
        for index in sorted((*summarised, *(opening & kept_set))):
            message = history[index]
            if isinstance(message, ToolResultMessage) and len(message.content) > prune_chars:
                stubbed = message.model_copy(update={"content": prune_stub(message)})
                saves = counts[index] - counter.count_message(stubbed)
                if saves > 0:
                    prune.append(Prune(index, message.call_id, stubbed.content, saves))
    replaced = sum(counts[i] for i in summarised) + (counts[0] if previous is not None else 0)
    empty = counter.count_message(summary_message(""))
    if replaced <= empty:
        return None  # no summary could be smaller
    opened = tuple(sorted(opening & kept_set))
    return Plan(cut, previous, tuple(kept), summarised, tuple(prune), replaced, opened, empty)


def _cut(
    history: Sequence[Message],
    counts: Sequence[int],
    charged: set[int],
    tail_budget: int,
    first: int,
) -> int | None:
    """The cut that keeps the largest tail within ``tail_budget`` less the tokens of
    ``charged`` (counted once, wherever they end up)."""
    spent = sum(counts[i] for i in charged)
    tail_counts = [0 if i in charged else c for i, c in enumerate(counts)] if spent else counts
    return choose_cut(cut_points(history), tail_counts, max(tail_budget - spent, 0), after=first)


def too_large(
    history: Sequence[Message],
    counts: Sequence[int],
    room: float,
    counter: TokenCounter,
    tools: Sequence[ToolSpec] = (),
) -> tuple[Prune, ...]:
    """The tool results, wherever they are (the latest step's too), that take more than
    ``room`` tokens on their own: with one of them no request fits below the threshold,
    and summarising does not help while it is in the recent tail. None when there is no
    room at all (the system prompt and tools fill it: no result is to blame)."""
    found: list[Prune] = []
    for index, message in enumerate(history):
        if room > 0 and isinstance(message, ToolResultMessage) and counts[index] > room:
            spec = next((t for t in tools if t.name == message.name), None)
            stub = too_large_stub(message, counts[index], spec)
            saves = counts[index] - counter.count_message(
                message.model_copy(update={"content": stub})
            )
            if saves > 0:  # a room smaller than the stub: it would not help
                found.append(Prune(index, message.call_id, stub, saves))
    return tuple(found)
