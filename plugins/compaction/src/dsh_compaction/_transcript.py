"""The transcript the summariser model reads, and its pieces: the older history as one
plain-text entry per message, each entry split into pieces that fit one request, the
pieces taken a chunk (one request's worth) at a time."""

from __future__ import annotations

import unicodedata
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

__all__ = ["CLIP_CHARS", "TEXT_CHARS", "Pieces", "continued", "earlier", "transcript"]

#: tool data (a result, a call's arguments) longer than this is shortened in the
#: transcript, its head and tail kept (a third of it for thinking and a provider's
#: blocks): a file read whole would cost a summariser call per chunk it fills, and the
#: agent can read it again
CLIP_CHARS: Final = 6000
#: what the user and the agent wrote goes whole up to this (~8,000 tokens: a few chunks
#: of a small summariser's, split across them by ``_split``); longer (a log piped in as
#: the prompt) it is clipped as tool data is, so one message adds a bounded number of
#: summariser calls, all within the compaction's ``timeout``
TEXT_CHARS: Final = 32_000


def _clip(text: str, limit: int = CLIP_CHARS) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :]
    return f"{head}\n[... {len(text) - len(head) - len(tail)} characters left out ...]\n{tail}"


def _entry(message: Message) -> str:
    if isinstance(message, UserMessage):
        return f"[user]\n{_clip(message.content, TEXT_CHARS)}"
    if isinstance(message, ToolResultMessage):
        status = " (error)" if message.is_error else ""
        return f"[tool result: {message.name}{status}]\n{_clip(message.content)}"
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append(f"[assistant]\n{_clip(block.text, TEXT_CHARS)}")
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
    clipped; the user's and the agent's text whole up to ``TEXT_CHARS``)."""
    return [entry for entry in map(_entry, messages) if entry]


def continued(entry: str) -> str:
    """What starts each piece of ``entry`` after the first: its speaker's header, marked
    continued (``[user, continued]``; any part of the agent's ``[assistant, continued]``)."""
    header = entry.partition("\n")[0]
    if not (header.startswith("[") and header.endswith("]")):
        return "[continued]\n"
    speaker = header[1:-1].removesuffix(", continued")
    if speaker.startswith("assistant"):
        speaker = "assistant"
    return f"[{speaker}, continued]\n"


def _joined(text: str, at: int) -> bool:
    """Whether a cut at ``at`` would part a grapheme: before a combining mark, or at
    either side of a zero-width joiner."""
    return unicodedata.category(text[at]).startswith("M") or "\u200d" in text[at - 1 : at + 1]


def _cut(text: str, start: int, end: int) -> int:
    """Where to end a piece ``text[start:end]`` (``end`` inside the text): after its last
    newline in its last quarter, else its last whitespace there, else at ``end`` (back
    off a combining mark or a joiner, when the quarter has a place that does not)."""
    low = start + (end - start) * 3 // 4 + 1
    newline = text.rfind("\n", low - 1, end)
    if newline >= 0:
        return newline + 1
    for at in range(end, low - 1, -1):
        if text[at - 1].isspace():
            return at
    for at in range(end, low - 1, -1):
        if not _joined(text, at):
            return at
    return end


def _split(entry: str, counter: TokenCounter, budget: int) -> list[str]:
    """``entry`` in pieces of at most ``budget`` tokens each, all of it kept (a chunk
    holds at least one whole piece, so a piece must fit on its own), cut where
    ``_cut`` says; a piece after the first starts with ``continued``."""
    tokens = counter.count_text(entry)
    if tokens <= budget:
        return [entry]
    pieces: list[str] = []
    start = 0
    again = continued(entry)
    while start < len(entry):
        marker = again if start else ""
        # the characters per token of this entry, as the counter sees it (a tokenizer's)
        size = max(int((budget - counter.count_text(marker)) * len(entry) / tokens), 1)
        end = min(start + size, len(entry))
        while True:
            if end < len(entry):
                end = _cut(entry, start, end)
            piece = marker + entry[start:end]
            count = counter.count_text(piece)
            if count <= budget or end - start <= 1:
                break
            # denser than the average: shrink it by as much as it is over
            end = start + max((end - start) * budget // count, 1)
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
