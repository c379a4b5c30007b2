"""Hiding the model API keys in an answer as it streams.

A server or a proxy may write the key into the answer (its text, its reasoning, a tool
call's arguments); the answer is logged as it streams (``assistant/chunk``, then
``assistant/message``), so the HTTP adapters hide it before the chunks leave them, as
``dsh._secrets.redact`` hides it in a tool's result: each occurrence, and each run of
at least half of it that begins or ends it.

A key may be split across chunks, so a piece cannot be redacted alone. A
``StreamRedactor`` shows at once all of the text but its longest tail that could still
grow into a hidden run (a piece of a key that may go on), which it holds until the next
piece tells, or until its block ends: usually nothing is held, and the text comes
through as it came. Held text is never lost: what a stream shows, put together, is the
whole text, redacted.
"""

from __future__ import annotations

from typing import Final, final

from dsh._secrets import HIDDEN, hidden_runs, shortest_run
from dsh.llm.base import Chunk, ReasoningDelta, TextDelta, ToolCallDelta, UsageChunk

__all__ = ["SHORTEST_HELD", "AnswerRedactor", "StreamRedactor"]


#: A tail shorter than this is shown even when it is a piece of a key: keys are random,
#: so most characters are in one, and holding one-character tails would delay a third
#: of all chunks. What is shown is remembered (``StreamRedactor``), so at most this
#: less one characters of a key show before the rest of it is hidden.
SHORTEST_HELD: Final = 3


@final
class StreamRedactor:
    """One text (a block's) that arrives in pieces: ``feed`` each piece, get what can be
    shown now, redacted; ``flush`` at the end of the text for what was held.

    The last characters shown (as many as the longest secret has) are kept as they
    came: a run that began in them is hidden in what follows, and a tail that goes on
    from them is held as if they were still there."""

    __slots__ = ("_held", "_keep", "_latest", "_marks", "_secrets", "_seen")

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = secrets  # longest first
        self._keep = max(map(len, secrets), default=0)
        # each secret with where in it a hidden run can begin at the latest
        self._latest = tuple((secret, len(secret) - shortest_run(secret)) for secret in secrets)
        # what a text holds if it holds a hidden run: each secret's first and last half
        self._marks = tuple(
            {m for s in secrets for m in (s[: shortest_run(s)], s[-shortest_run(s) :])}
        )
        self._held = ""  # text not shown yet
        self._seen = ""  # the last characters shown, unredacted

    def feed(self, piece: str) -> str:
        text = self._held + piece if self._held else piece
        if not text:
            return ""
        seen = self._seen
        whole = seen + text if seen else text
        cut = self._cut(whole)
        if cut <= len(seen):
            self._held = text
            return ""
        self._held = whole[cut:] if cut < len(whole) else ""
        return self._show(whole[:cut], len(seen))

    def flush(self) -> str:
        """What is held, redacted: the text ends (what comes next is another text)."""
        text, self._held = self._held, ""
        shown = self._show(self._seen + text, len(self._seen)) if text else ""
        self._seen = ""
        return shown

    def _cut(self, text: str) -> int:
        """Where ``text`` is cut in what is shown now and what is held: before the tail
        ``_held_from`` finds, and before any hidden run that the cut would split (a run
        that ended in that tail: in two, each part might be too short to hide)."""
        cut = _held_from(text, self._latest)
        moved = cut < len(text)
        while moved:
            moved = False
            for secret in self._secrets:
                for start, end in hidden_runs(text, secret):
                    if start < cut < end:
                        cut, moved = start, True
        return cut

    def _show(self, whole: str, after: int) -> str:
        """What ``whole[after:]`` shows, ``whole[:after]`` having been shown."""
        self._seen = whole[-self._keep :]
        for mark in self._marks:
            if mark in whole:
                break
        else:
            return whole[after:]  # the usual case: no run of a secret
        spans = sorted(
            (max(start, after), end)
            for secret in self._secrets
            for start, end in hidden_runs(whole, secret)
            if end > after
        )
        if not spans:
            return whole[after:]
        parts: list[str] = []
        done = after
        for start, end in spans:
            if start > done or not parts:  # overlapping runs are hidden as one
                parts += (whole[done:start], HIDDEN)
            done = max(done, end)
        parts.append(whole[done:])
        return "".join(parts)


def _held_from(text: str, latest: tuple[tuple[str, int], ...]) -> int:
    """Where the longest tail of ``text`` starts that is a piece of a secret from which
    a hidden run can still grow (one that begins at most ``len - shortest_run`` into
    the secret: it may go on to the secret's start or to at least half of it to its
    end), of ``SHORTEST_HELD`` characters or more; ``len(text)`` if there is none."""
    size = len(text)
    end = text[-SHORTEST_HELD:]
    if len(end) < SHORTEST_HELD:
        return size
    longest = 0
    for secret, last in latest:
        if end not in secret:
            continue  # the usual case: no tail of text is a piece of this secret
        found = secret.find(end)
        while found != -1:  # each place the tail's end is in the secret: how far back
            stop = found + SHORTEST_HELD  # it goes on like the secret before that end
            start = found
            while start > 0 and stop - start < size and text[start - stop - 1] == secret[start - 1]:
                start -= 1
            if start <= last:
                longest = max(longest, stop - start)
            found = secret.find(end, found + 1)
    return size - longest


#: The chunk kinds whose text is a block's: text and reasoning (not a redacted one).
_TEXT: Final = "text"
_REASONING: Final = "reasoning"


@final
class AnswerRedactor:
    """The chunks of one answer, with the secrets hidden from the text, the reasoning
    and the tool calls' arguments (an ``id``, a ``name``, a signature, encrypted
    reasoning and a provider's own block pass as they are). ``take`` each chunk, get
    the chunks to show in its place; ``flush`` when the stream fails, for what was held
    (a ``Finish`` flushes all before it)."""

    __slots__ = ("_calls", "_kind", "_secrets", "_text")

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = secrets
        self._text = StreamRedactor(secrets)  # the open text or reasoning block's
        self._kind = _TEXT  # which of them is open
        self._calls: dict[int, StreamRedactor] = {}  # by index: each call's arguments

    def take(self, chunk: Chunk) -> list[Chunk]:
        if isinstance(chunk, TextDelta):
            out = self._close_block() if self._kind != _TEXT else []
            self._kind = _TEXT
            shown = self._text.feed(chunk.text)
            if shown:
                out.append(chunk if shown == chunk.text else TextDelta(shown))
            return out
        if isinstance(chunk, ReasoningDelta) and chunk.redacted is None:
            out = self._close_block() if self._kind != _REASONING else []
            self._kind = _REASONING
            if chunk.signature is not None and not chunk.text:
                out += self._close_block()  # a signature on its own ends its block
                out.append(chunk)
                return out
            shown = self._text.feed(chunk.text)
            if chunk.signature is not None:  # a block whole at its start: nothing held
                shown += self._text.flush()
                if shown != chunk.text:
                    chunk = ReasoningDelta(shown, signature=chunk.signature)
                out.append(chunk)
            elif shown:
                out.append(chunk if shown == chunk.text else ReasoningDelta(shown))
            return out
        if isinstance(chunk, ToolCallDelta):
            out = self._close_block()
            arguments = self._calls.get(chunk.index)
            if arguments is None:
                arguments = self._calls[chunk.index] = StreamRedactor(self._secrets)
            shown = arguments.feed(chunk.arguments)
            if shown == chunk.arguments:
                out.append(chunk)
            elif shown or chunk.id is not None or chunk.name is not None:
                out.append(ToolCallDelta(chunk.index, chunk.id, chunk.name, shown))
            return out
        if isinstance(chunk, UsageChunk):  # some servers send one with every piece
            return [chunk]
        out = self.flush()  # a Finish, a provider's block: the blocks before it end
        out.append(chunk)
        return out

    def flush(self) -> list[Chunk]:
        """What is held, of every block and call: the stream ends."""
        out = self._close_block()
        for index, arguments in self._calls.items():
            rest = arguments.flush()
            if rest:
                out.append(ToolCallDelta(index, arguments=rest))
        return out

    def _close_block(self) -> list[Chunk]:
        rest = self._text.flush()
        if not rest:
            return []
        return [TextDelta(rest) if self._kind == _TEXT else ReasoningDelta(rest)]
