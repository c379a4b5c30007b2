"""The turn's task: which user messages ``keep_last_user_message`` keeps verbatim.

A turn is opened by its prompts (``user/message`` events: one, or a batch of queued
ones) and may be steered later (``steering/message``: ``steer()``, or a plugin's
continuation ``reason``); both become plain user messages in the history. Mid-turn
the latest user message is often a steering note ("remember to run the tests"), so
keeping only that one would summarise away what the turn is for. The log tells them
apart: the events since the latest ``turn/start`` name the turn's prompts and its
steering, matched to the history's user messages by content, newest first. The log
is read incrementally (``TurnTask``): a compaction late in a long turn reads only what
was logged since the one before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from dsh import Message, UserMessage
from dsh.session import SessionEvent
from dsh_compaction._plan import last_user_message

__all__ = ["TurnTask", "task_marks"]


class TurnTask:
    """The latest turn's prompts and steering, read from the log as it grows: each
    call reads only the events logged since the call before, newest first, back to the
    turn's start at most, so the compactions of a long turn read its events once in
    all (one per agent, in its ``AgentState``)."""

    __slots__ = ("_events", "_prompts", "_seen", "_steering", "_turn")

    def __init__(self) -> None:
        self._events: Sequence[SessionEvent] | None = None
        self._seen = 0  # events read so far
        self._turn = False  # a turn/start was seen
        self._prompts: list[str] = []  # newest first
        self._steering: list[str] = []

    def contents(self, events: Sequence[SessionEvent]) -> tuple[list[str], list[str]] | None:
        """The contents of the latest turn's prompts and of its steering, newest first;
        None when the log has no turn."""
        if events is not self._events or len(events) < self._seen:  # another log
            self._events, self._seen, self._turn = events, 0, False
            self._prompts, self._steering = [], []
        prompts: list[str] = []
        steering: list[str] = []
        started = False
        for index in range(len(events) - 1, self._seen - 1, -1):
            event = events[index]
            if event.type == "turn/start":
                started = True
                break
            if event.type in ("user/message", "steering/message"):
                content = event.data.get("content")
                if isinstance(content, str):
                    (prompts if event.type == "user/message" else steering).append(content)
        self._seen = len(events)
        if started:  # a new turn: what was read before belongs to an older one
            self._turn, self._prompts, self._steering = True, prompts, steering
        else:
            self._prompts = prompts + self._prompts
            self._steering = steering + self._steering
        return (list(self._prompts), list(self._steering)) if self._turn else None


def _turn_messages(
    history: Sequence[Message], prompts: list[str], steering: list[str], first: int
) -> tuple[list[int], list[int]]:
    """The indices of the history's user messages from ``first`` on (past the summary
    the history opens with) that are the turn's prompts and its steering (those still
    in it, not summarised), newest first."""
    wanted = (Counter(prompts), Counter(steering))
    found: tuple[list[int], list[int]] = ([], [])
    left = len(prompts) + len(steering)
    for index in range(len(history) - 1, first - 1, -1):
        if not left:
            break
        message = history[index]
        if not isinstance(message, UserMessage):
            continue
        for kind in (0, 1):  # a steering note that repeats a prompt counts as the prompt
            if wanted[kind][message.content] > 0:
                wanted[kind][message.content] -= 1
                found[kind].append(index)
                left -= 1
                break
    return found


def task_marks(
    events: Sequence[SessionEvent],
    history: Sequence[Message],
    counts: Sequence[int],
    budget: int,
    turn: TurnTask | None = None,
    first: int = 0,
) -> set[int]:
    """The user messages to keep verbatim: the latest turn's prompts (newest first),
    then its newest steering note only (so repeated or many notes never pile up after
    each compaction), while together they fit ``budget`` tokens (``counts``: each
    message's). Without a turn in the log (a history built otherwise), the latest user
    message if it fits. ``turn``: the agent's ``TurnTask`` (else the log is read
    anew). The tokens of the messages kept count against ``budget`` once, whether they
    end up before the cut or in the tail (``plan_compaction``'s ``charged``). ``first``:
    1 when the history opens with a summary (``opening_summary``), never the task."""
    contents = (turn or TurnTask()).contents(events)
    if contents is None:
        latest = last_user_message(history, first)
        return {latest} if latest is not None and counts[latest] <= budget else set()
    prompts, steering = _turn_messages(history, *contents, first)
    keep: set[int] = set()
    used = 0
    for index in (*prompts, *steering[:1]):  # the newest note: notes never pile up
        if used + counts[index] <= budget:
            keep.add(index)
            used += counts[index]
    return keep
