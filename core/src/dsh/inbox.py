"""The inbox of an agent: queued prompts (next turns) and steering (the running turn)."""

from __future__ import annotations

from typing import final

__all__ = ["Inbox", "Prompt", "check_prompt"]


@final
class Inbox:
    """Two FIFOs. ``queued`` items start turns; ``steering`` items join the running turn
    before its next request. Leftover steering is moved to the front of ``queued`` when a
    turn ends, so it is never dropped and is the next turn."""

    __slots__ = ("queued", "steering")

    def __init__(self) -> None:
        # lists, not deques: they stay tiny, and an empty deque costs ~600 bytes per agent
        self.queued: list[str] = []
        self.steering: list[str] = []

    def take_queued(self, batch: bool) -> list[str]:
        if batch:
            items = list(self.queued)
            self.queued.clear()
            return items
        return [self.queued.pop(0)] if self.queued else []

    def take_steering(self) -> list[str]:
        items = list(self.steering)
        self.steering.clear()
        return items

    def requeue_steering(self) -> None:
        """Leftover steering goes first: it is the next turn, ahead of later prompts."""
        self.queued[:0] = self.steering
        self.steering.clear()

    def clear(self) -> bool:
        """Drop everything; True if anything was dropped."""
        had = bool(self.queued or self.steering)
        self.queued.clear()
        self.steering.clear()
        return had


class Prompt(str):
    """A prompt as ``prompt()`` queues it: equal to its text, and an object of its own
    (a plain str of one character is shared by CPython), so its queue entry is told
    apart from an equal prompt of another caller's. The session logs it as a plain
    str."""

    __slots__ = ()


def check_prompt(prompt: object) -> None:
    """Refuse a prompt that is not a str (``send``, ``steer``, ``prompt``): a
    ``TypeError``, before anything is queued or logged; an empty one, ``""``, a
    ``ValueError`` (a turn would send the model an empty user message, which some
    providers refuse). Whitespace is text: it is sent."""
    if type(prompt) is not str and type(prompt) is not Prompt:
        raise TypeError(f"a prompt must be a str, not {type(prompt).__name__}")
    if not prompt:
        raise ValueError("a prompt may not be empty: there is nothing to send the model")
