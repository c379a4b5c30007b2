"""The transcript the summariser model reads, and its pieces: the older history as one
plain-text entry per message, each entry split into pieces that fit one request, the
pieces taken a chunk (one request's worth) at a time."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Final

from dsh import (
    Message,
    ProviderBlock,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from dsh_compaction._tokens import TokenCounter, json_text

__all__ = ["CLIP_CHARS", "CONTINUED", "Pieces", "earlier", "transcript"]

#: tool data (a result, a call's arguments) longer than this is shortened in the
#: transcript, its head and tail kept (a third of it for thinking and a provider's
#: blocks): a file read whole would cost a summariser call per chunk it fills, and the
#: agent can read it again. What the user and the agent wrote is never clipped: a long
#: message is split across chunks (``_split``), every word of it summarised
CLIP_CHARS: Final = 6000
#: what starts each piece of an entry after the first (see ``_split``)
CONTINUED: Final = "[... continued]\n"


def _clip(text: str, limit: int = CLIP_CHARS) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :]
    return f"{head}\n[... {len(text) - len(head) - len(tail)} characters left out ...]\n{tail}"


def _entry(message: Message) -> str:
    if isinstance(message, UserMessage):
        return f"[user]\n{message.content}"
    if isinstance(message, ToolResultMessage):
        status = " (error)" if message.is_error else ""
        return f"[tool result: {message.name}{status}]\n{_clip(message.content)}"
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append(f"[assistant]\n{block.text}")
        elif isinstance(block, ReasoningBlock) and block.text:
            parts.append(f"[assistant, thinking]\n{_clip(block.text, CLIP_CHARS // 3)}")
        elif isinstance(block, ToolCall):
            parts.append(f"[assistant calls {block.name}]\n{_clip(block.arguments)}")
        elif isinstance(block, ProviderBlock):  # a server tool's call or results, say
            data = json_text(block.data)
            what = f"{block.provider} {block.data.get('type') or 'block'}"
            parts.append(f"[assistant, {what}]\n{_clip(data, CLIP_CHARS // 3)}")
    return "\n\n".join(parts)


def transcript(messages: Sequence[Message]) -> list[str]:
    """One transcript entry per message (long tool data, thinking and provider blocks
    clipped; the user's and the agent's text whole)."""
    return [entry for entry in map(_entry, messages) if entry]


def _split(entry: str, counter: TokenCounter, budget: int) -> list[str]:
    """``entry`` in pieces of at most ``budget`` tokens each, all of it kept (a chunk
    holds at least one whole piece, so a piece must fit on its own)."""
    tokens = counter.count_text(entry)
    if tokens <= budget:
        return [entry]
    pieces: list[str] = []
    start = 0
    while start < len(entry):
        marker = CONTINUED if start else ""
        # the characters per token of this entry, as the counter sees it (a tokenizer's)
        size = max(int((budget - counter.count_text(marker)) * len(entry) / tokens), 1)
        end = min(start + size, len(entry))
        piece = marker + entry[start:end]
        while end - start > 1 and counter.count_text(piece) > budget:
            end = start + (end - start) // 2  # denser than the average: halve it
            piece = marker + entry[start:end]
        pieces.append(piece)
        start = end
    return pieces


def earlier(summary: str) -> str:
    """A summary as a transcript entry: one too large to merge (``Pieces`` summarises
    it with the conversation)."""
    return f"[summary of the conversation before this]\n{summary}"


class Pieces:
    """The pieces of transcript entries still to send, each at most ``room`` tokens (an
    entry over it is split, all of it kept), with their sizes, and whether they are of
    a summary (``earlier``) rather than the conversation."""

    __slots__ = ("_counter", "_last", "_pieces", "_room")

    def __init__(self, entries: Sequence[str], counter: TokenCounter, room: int) -> None:
        self._counter = counter
        self._room = room
        self._pieces: deque[tuple[str, int, bool]] = deque()
        self._last: list[tuple[str, int, bool]] = []  # the pieces ``take`` took last
        self.add(entries)

    def __bool__(self) -> bool:
        return bool(self._pieces)

    def add(self, entries: Sequence[str], *, first: bool = False, summary: bool = False) -> None:
        """Add ``entries`` (``summary``: a summary's) after the pieces (``first``: before
        them)."""
        counter = self._counter
        new = [
            (p, counter.count_text(p), summary)
            for entry in entries
            for p in _split(entry, counter, self._room)
        ]
        if first:
            self._pieces.extendleft(reversed(new))
        else:
            self._pieces.extend(new)

    def take(self, budget: int, room: int | None = None) -> tuple[list[str], int, str]:
        """The next chunk, one piece at least and more while they fit ``budget`` tokens,
        its tokens, and the conversation's own part of it (its pieces not of a summary,
        joined as in the request); an empty chunk when none are left. A first piece over
        ``room`` (when less than the room the pieces were split for) is split again."""
        pieces = self._pieces
        if room is not None and pieces and pieces[0][1] > room:
            piece, _, summary = pieces.popleft()
            parts = _split(piece, self._counter, room)
            pieces.extendleft(reversed([(p, self._counter.count_text(p), summary) for p in parts]))
        taken: list[tuple[str, int, bool]] = []
        used = 0
        while pieces and (not taken or used + pieces[0][1] <= budget):
            taken.append(pieces.popleft())
            used += taken[-1][1]
        self._last = taken
        own = "\n\n".join(p for p, _, summary in taken if not summary)
        return [p for p, _, _ in taken], used, own

    def give_back(self) -> None:
        """Put the pieces ``take`` took last back in front."""
        self._pieces.extendleft(reversed(self._last))
        self._last = []


def _chunks(
    entries: list[str], counter: TokenCounter, budget: int, room: int | None = None
) -> list[list[str]]:
    """``entries`` in chunks of about ``budget`` tokens: an entry over it has a chunk of
    its own, split across chunks when it is over ``room`` (default: ``budget``)."""
    pieces = Pieces(entries, counter, budget if room is None else room)
    chunks = [pieces.take(budget)[0]]  # one at least
    while pieces:
        chunks.append(pieces.take(budget)[0])
    return chunks
