"""Hiding the model API keys in an answer as it streams.

A server or a proxy may write the key into the answer (its text, its reasoning, a tool
call's arguments); the answer is logged as it streams (``assistant/chunk``, then
``assistant/message``), so the HTTP adapters hide it before the chunks leave them, as
``dsh._secrets.redact`` hides it in a tool's result: each occurrence, and each run of
at least half of it that begins or ends it.

A key may be split across chunks, so a piece cannot be redacted alone. A
``StreamRedactor`` shows at once all of the text but its longest tail that could still
grow into a hidden run (a piece of a key that may go on), which it holds until the next
piece tells, or until the answer ends: usually nothing is held, and the text comes
through as it came. Held text is never lost: what a stream shows, put together, is the
whole text, redacted. An ``AnswerRedactor`` has one for all the text of an answer, one
for all its reasoning and one for each tool call's arguments, as consumers join them
(whatever chunks of another kind come between).
"""

from __future__ import annotations

from typing import Final, final

from dsh._secrets import HIDDEN, hidden_runs, shortest_run
from dsh.llm.base import Chunk, Finish, ReasoningDelta, TextDelta, ToolCallDelta

__all__ = ["SHORTEST_HELD", "AnswerRedactor", "StreamRedactor"]


#: A tail shorter than this is shown even when it is a piece of a key: keys are random,
#: so most characters are in one, and holding one-character tails would delay a third
#: of all chunks. What is shown is remembered (``StreamRedactor``), so at most this
#: less one characters of a key show before the rest of it is hidden.
SHORTEST_HELD: Final = 3


@final
class StreamRedactor:
    """One text that arrives in pieces: ``feed`` each piece, get what can be shown now,
    redacted; ``flush`` for what is held, when the text ends or something else must come
    out after what it has shown so far.

    The last characters shown (as many as the longest secret has) are kept as they
    came, even by ``flush``: a run that began in them is hidden in what follows, and a
    tail that goes on from them is held as if they were still there. At most
    ``2 * len(longest secret)`` characters are held: a longer stretch of runs that
    overlap (text made of a key's pieces over and over) is hidden in parts."""

    __slots__ = ("_held", "_keep", "_latest", "_marks", "_most", "_open", "_secrets", "_seen")

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = secrets  # longest first
        self._keep = max(map(len, secrets), default=0)
        self._most = 2 * self._keep
        # each secret with where in it a hidden run can begin at the latest
        self._latest = tuple((secret, len(secret) - shortest_run(secret)) for secret in secrets)
        # what a text holds if it holds a hidden run: each secret's first and last half
        self._marks = tuple(
            {m for s in secrets for m in (s[: shortest_run(s)], s[-shortest_run(s) :])}
        )
        self._held = ""  # text not shown yet
        self._seen = ""  # the last characters shown, unredacted
        self._open = False  # what was shown ends with a *** whose run may go on

    def feed(self, piece: str) -> str:
        text = self._held + piece if self._held else piece
        if not text:
            return ""
        seen = self._seen
        whole = seen + text if seen else text
        spans = self._spans(whole)
        cut = self._cut(whole, spans)
        if cut <= len(seen):
            self._held = text
            return ""
        self._held = whole[cut:] if cut < len(whole) else ""
        return self._show(whole, len(seen), cut, spans)

    def flush(self) -> str:
        """What is held, redacted; what was shown is still remembered (the text may go
        on, as text a tool call's piece interrupted goes on)."""
        text, self._held = self._held, ""
        if not text:
            return ""
        whole = self._seen + text
        return self._show(whole, len(self._seen), len(whole), self._spans(whole))

    def _spans(self, whole: str) -> list[tuple[int, int]]:
        """The hidden runs of ``whole``, by start (none, usually: no half of a secret)."""
        for mark in self._marks:
            if mark in whole:
                break
        else:
            return []
        return sorted(span for secret in self._secrets for span in hidden_runs(whole, secret))

    def _cut(self, whole: str, spans: list[tuple[int, int]]) -> int:
        """Where ``whole`` is cut in what is shown now and what is held: before the tail
        ``_held_from`` finds, and before the stretch of overlapping hidden runs the cut
        would split (a run that ended in that tail: in two, each part might be too short
        to hide), but no more than ``_most`` characters before the end (the part of a
        run before the cut is then hidden, ``_show``)."""
        cut = _held_from(whole, self._latest)
        if cut < len(whole) and spans:
            region_start, region_end = spans[0]
            for start, end in spans:  # by start: the stretches of overlapping runs
                if start >= region_end:
                    if region_start < cut < region_end or start >= cut:
                        break
                    region_start = start
                region_end = max(region_end, end)
            if region_start < cut < region_end:
                cut = region_start
        return max(cut, len(whole) - self._most)

    def _show(self, whole: str, after: int, cut: int, spans: list[tuple[int, int]]) -> str:
        """What ``whole[after:cut]`` shows, ``whole[:after]`` having been shown: each run
        of ``whole`` hidden, as far as it is in there (overlapping runs as one ``***``,
        and so a run that goes on from the ``***`` shown last)."""
        shown = whole[:cut]
        self._seen = shown[-self._keep :]
        parts: list[str] = []
        done = after
        for start, end in spans:
            if start >= cut:
                break
            if end <= after:
                continue
            if start > done or not (parts or self._open):
                parts += (whole[done : max(start, after)], HIDDEN)
            elif not parts:
                parts.append("")  # the run goes on from the *** shown last
            done = max(done, min(end, cut))
        self._open = done == cut and bool(parts)
        if not parts:
            return shown[after:]  # the usual case: no run of a secret
        parts.append(whole[done:cut])
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


@final
class AnswerRedactor:
    """The chunks of one answer, with the secrets hidden from the text, the reasoning
    and the tool calls' arguments (an ``id``, a ``name``, a signature, encrypted
    reasoning and a provider's own block pass as they are). ``take`` each chunk, get
    the chunks to show in its place; ``flush`` when the stream ends without a
    ``Finish``, for what was held (a ``Finish`` flushes all before it).

    The redaction follows what is joined, not the blocks: all the text deltas of an
    answer are one text (``AssistantMessage.text`` and the terminal join them, whatever
    came between), so are all its reasoning deltas, and each call's arguments (the
    assembler joins a call's pieces by index, whatever came between). What one holds
    stays held while the others' chunks pass, and comes out with its next piece: a key
    split by another kind's chunk is hidden as one split by nothing. Only a signature
    on its own, which ends its reasoning block, brings the reasoning held before it."""

    __slots__ = ("_calls", "_reasoning", "_secrets", "_text")

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = secrets
        self._text = StreamRedactor(secrets)
        self._reasoning = StreamRedactor(secrets)
        self._calls: dict[int, StreamRedactor] = {}  # by index: each call's arguments

    def take(self, chunk: Chunk) -> list[Chunk]:
        if isinstance(chunk, TextDelta):
            shown = self._text.feed(chunk.text)
            if shown == chunk.text:
                return [chunk]
            return [TextDelta(shown)] if shown else []
        if isinstance(chunk, ReasoningDelta) and chunk.redacted is None:
            return self._reason(chunk)
        if isinstance(chunk, ToolCallDelta):
            arguments = self._calls.get(chunk.index)
            if arguments is None:
                arguments = self._calls[chunk.index] = StreamRedactor(self._secrets)
            shown = arguments.feed(chunk.arguments)
            if shown == chunk.arguments:
                return [chunk]
            if shown or chunk.id is not None or chunk.name is not None:
                return [ToolCallDelta(chunk.index, chunk.id, chunk.name, shown)]
            return []
        if isinstance(chunk, Finish):
            out = self.flush()  # the answer ends: nothing is held after it
            out.append(chunk)
            return out
        # usage (some servers send it with every piece), encrypted reasoning, a
        # provider's own block: nothing to hide, and nothing they end
        return [chunk]

    def flush(self) -> list[Chunk]:
        """What is held, of the text, the reasoning and every call: the stream ends."""
        out: list[Chunk] = []
        rest = self._reasoning.flush()
        if rest:
            out.append(ReasoningDelta(rest))
        rest = self._text.flush()
        if rest:
            out.append(TextDelta(rest))
        for index, arguments in self._calls.items():
            rest = arguments.flush()
            if rest:
                out.append(ToolCallDelta(index, arguments=rest))
        return out

    def _reason(self, chunk: ReasoningDelta) -> list[Chunk]:
        reasoning = self._reasoning
        if chunk.signature is not None and not chunk.text:
            # a signature on its own ends its block: what it held belongs before it
            rest = reasoning.flush()
            return [ReasoningDelta(rest), chunk] if rest else [chunk]
        shown = reasoning.feed(chunk.text)
        if chunk.signature is not None:  # a block whole at its start: nothing held
            shown += reasoning.flush()
            if shown == chunk.text:
                return [chunk]
            return [ReasoningDelta(shown, signature=chunk.signature)]
        if shown == chunk.text:
            return [chunk]
        return [ReasoningDelta(shown)] if shown else []
