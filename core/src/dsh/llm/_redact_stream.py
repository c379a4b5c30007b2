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
(whatever chunks of another kind come between). ``hidden`` streams a model's answer
through one: ``HttpModel.stream``'s and a plugin's model's (``dsh.llm.registry``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Final, final

from dsh._secrets import HIDDEN, MIN_LENGTH, hidden_runs, redact, shortest_run
from dsh.llm._hidden_args import call_piece, marked
from dsh.llm._redact_json import (
    JsonEscapes,
    escape_start,
    hidden_in,
    json_secrets,
    out_of_escapes,
)
from dsh.llm.base import (
    Chunk,
    Finish,
    ProviderBlockChunk,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)

__all__ = ["SHORTEST_HELD", "AnswerRedactor", "StreamRedactor", "hidden"]

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
    overlap (text made of a key's pieces over and over) is hidden in parts.

    ``json``: the text is JSON (a tool call's arguments): each run is hidden from and to
    escapes' ends, and the text is never cut inside an escape (``out_of_escapes``,
    ``escape_start``), so no ``\\`` is left before a ``***``. ``hid``: it hid a run."""

    __slots__ = (
        "_held",
        "_json",
        "_keep",
        "_latest",
        "_marks",
        "_most",
        "_open",
        "_secrets",
        "_seen",
        "hid",
    )

    def __init__(self, secrets: tuple[str, ...], *, json: bool = False) -> None:
        self._secrets = secrets  # longest first
        self._json = json
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
        self.hid = False

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

    def release(self) -> str:
        """What is held, redacted, as ``flush`` gives it, unless it may be a piece of a
        key of ``MIN_LENGTH`` characters or more (with what was shown before it): the
        end of a word that is also in a key comes out where it was, and what is likely
        a key's stays held (``AnswerRedactor``: the block ends, the text goes on)."""
        if not self._held:
            return ""
        whole = self._seen + self._held
        if len(whole) - _held_from(whole, self._latest) >= MIN_LENGTH:
            return ""
        return self.flush()

    def _spans(self, whole: str) -> list[tuple[int, int]]:
        """The hidden runs of ``whole``, by start (none, usually: no half of a secret)."""
        for mark in self._marks:
            if mark in whole:
                break
        else:
            return []
        spans = sorted(span for secret in self._secrets for span in hidden_runs(whole, secret))
        return out_of_escapes(whole, spans) if self._json else spans

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
        cut = max(cut, len(whole) - self._most)
        return escape_start(whole, cut) if self._json else cut

    def _show(self, whole: str, after: int, cut: int, spans: list[tuple[int, int]]) -> str:
        """What ``whole[after:cut]`` shows, ``whole[:after]`` having been shown: each run
        of ``whole`` hidden, as far as it is in there (overlapping runs as one ``***``,
        and so a run that goes on from the ``***`` shown last)."""
        shown = whole[:cut]
        # JSON: from an escape's start, so the next text's escapes are read as they are
        keep = escape_start(whole, max(0, cut - self._keep)) if self._json else -self._keep
        self._seen = shown[keep:]
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
        self.hid = True
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


def _malformed(chunk: Chunk) -> bool:
    """A delta the assembler refuses (MALFORMED_RESPONSE: a third-party adapter's
    mistake, fields of the wrong types, checked as ``Assembler.add`` checks them): passed
    on as it came, so the step ends with that error, not with this module's TypeError."""
    if isinstance(chunk, TextDelta):
        return type(chunk.text) is not str
    if isinstance(chunk, ReasoningDelta):
        return type(chunk.text) is not str or not _optional_str(chunk.signature)
    if isinstance(chunk, ToolCallDelta):
        return (
            type(chunk.index) is not int
            or type(chunk.arguments) is not str
            or not (_optional_str(chunk.id) and _optional_str(chunk.name))
        )
    return False


def _optional_str(value: object) -> bool:
    return value is None or type(value) is str


#: The kinds of block the assembler appends text to while it is the last block.
_TEXT: Final = "text"
_REASONING: Final = "reasoning"


@final
class AnswerRedactor:
    """The chunks of one answer, with the secrets hidden from the text, the reasoning
    and the tool calls' arguments (JSON: however escaped, ``dsh.llm._redact_json``), ids
    and names, and from a provider's own block's strings (``hidden_in``); a signature
    and encrypted reasoning pass as they are. ``take`` each chunk, get the chunks to
    show in its place; ``flush`` when the stream ends without a ``Finish``, for what was
    held (a ``Finish`` flushes all before it). A call's pieces from the first with a
    secret hidden on (or marked so by a redactor before this one) are
    ``HiddenArguments``, and the step is told: the call is not run (``_hidden_args``).

    The redaction follows what is joined, not the blocks: all the text deltas of an
    answer are one text (``AssistantMessage.text`` and the terminal join them, whatever
    came between), so are all its reasoning deltas, and each call's arguments (the
    assembler joins a call's pieces by index, whatever came between): a key split by
    another kind's chunk is hidden as one split by nothing. What one holds stays held
    while the others' chunks pass, and comes out with its next piece; but when the
    assembler's last block ends (a new call, a provider's block, reasoning after text),
    the held end of its text comes out before the chunk that ends it unless it may be
    ``MIN_LENGTH`` characters or more of a key (``StreamRedactor.release``): the end
    of a word that is also in a key stays in its block. A signature ends its reasoning
    block: all the reasoning held comes out before it, or with it (a block whole)."""

    __slots__ = ("_calls", "_json", "_last", "_reasoning", "_secrets", "_text")

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = secrets
        self._text = StreamRedactor(secrets)
        self._reasoning = StreamRedactor(secrets)
        # by index: each call's arguments, JSON (dsh.llm._redact_json: a key escaped)
        self._calls: dict[int, tuple[JsonEscapes, StreamRedactor]] = {}
        self._json: tuple[tuple[str, ...], frozenset[str]] | None = None
        self._last: str | None = None  # the assembler's last block, if text or reasoning

    def take(self, chunk: Chunk) -> list[Chunk]:
        if _malformed(chunk):  # as it came: the assembler refuses it (MALFORMED_RESPONSE)
            return [chunk]
        if isinstance(chunk, TextDelta):
            out = self._end_block() if self._last != _TEXT else []
            self._last = _TEXT
            shown = self._text.feed(chunk.text)
            if shown == chunk.text:
                out.append(chunk)
            elif shown:
                out.append(TextDelta(shown))
            return out
        if isinstance(chunk, ReasoningDelta) and chunk.redacted is None:
            out = self._end_block() if self._last != _REASONING else []
            self._last = _REASONING
            return out + self._reason(chunk)
        if isinstance(chunk, ToolCallDelta):
            call = self._calls.get(chunk.index)
            out = []
            if call is None:  # a new call: a block of its own
                out = self._end_block()
                call = self._calls[chunk.index] = self._new_call()
            escapes, arguments = call
            text = chunk.arguments
            if escapes.tail or "\\" in text:  # not usually: the escapes, written plainly
                text = escapes.feed(text)
            piece = call_piece(chunk, arguments.feed(text), arguments, self._secrets)
            if piece is not None:  # the call's id and name hidden too; marked: not run
                out.append(piece)
            return out
        if isinstance(chunk, Finish):  # the answer ends: nothing is held after it
            out, detail = self.flush(), chunk.detail  # the provider's word (a plugin's)
            if type(detail) is str and (shown := redact(detail, self._secrets)) != detail:
                chunk = Finish(chunk.reason, shown)
            out.append(chunk)
            return out
        if isinstance(chunk, UsageChunk):  # some servers send one with every piece
            return [chunk]
        # encrypted reasoning, a provider's own block: a block of its own
        if isinstance(chunk, ProviderBlockChunk):  # whole and decoded: its strings
            data = hidden_in(chunk.data, self._secrets)
            if data is not chunk.data:
                chunk = ProviderBlockChunk(chunk.provider, data)
        out = self._end_block()
        out.append(chunk)
        return out

    def flush(self) -> list[Chunk]:
        """What is held, of the text, the reasoning and every call: the stream ends.
        The last block's kind first, so what it held joins it, not a new block."""
        out: list[Chunk] = []
        kinds = [(self._reasoning, ReasoningDelta), (self._text, TextDelta)]
        if self._last == _TEXT:
            kinds.reverse()
        for held, kind in kinds:
            if rest := held.flush():
                out.append(kind(rest))
        for index, (escapes, arguments) in self._calls.items():
            rest = arguments.feed(escapes.flush()) + arguments.flush()
            if rest:
                kind = marked() if arguments.hid else ToolCallDelta
                out.append(kind(index, arguments=rest))
        return out

    def _new_call(self) -> tuple[JsonEscapes, StreamRedactor]:
        """A call's arguments: JSON, so a secret's escaped characters are found too."""
        if self._json is None:
            self._json = json_secrets(self._secrets)
        secrets, chars = self._json
        return JsonEscapes(chars), StreamRedactor(secrets, json=True)

    def _end_block(self) -> list[Chunk]:
        """The assembler's last block ends: what its text holds, if it may come out."""
        last, self._last = self._last, None
        if last == _TEXT:
            rest = self._text.release()
            return [TextDelta(rest)] if rest else []
        if last == _REASONING:
            rest = self._reasoning.release()
            return [ReasoningDelta(rest)] if rest else []
        return []

    def _reason(self, chunk: ReasoningDelta) -> list[Chunk]:
        reasoning = self._reasoning
        if chunk.signature is not None and not chunk.text:
            # a signature on its own ends its block: what it held belongs before it
            self._last = None
            rest = reasoning.flush()
            return [ReasoningDelta(rest), chunk] if rest else [chunk]
        shown = reasoning.feed(chunk.text)
        if chunk.signature is not None:  # a block whole at its start: it ends there too
            self._last = None
            shown += reasoning.flush()
            if shown == chunk.text:
                return [chunk]
            return [ReasoningDelta(shown, signature=chunk.signature)]
        if shown == chunk.text:
            return [chunk]
        return [ReasoningDelta(shown)] if shown else []


async def hidden(
    chunks: AsyncIterator[Chunk], secrets: tuple[str, ...]
) -> AsyncGenerator[Chunk, None]:
    """``chunks`` with ``secrets`` (longest first) hidden. What is held comes out however
    the stream ends: with a ``Finish``, without one, or with an error (before it is
    raised: the text of a step cut off is logged); not when the stream is cancelled or
    closed, when nothing more may be yielded. Closing this closes ``chunks`` (an abort
    closes the HTTP response at once), if it can be closed."""
    hide = AnswerRedactor(secrets)
    try:
        try:
            async for chunk in chunks:
                for shown in hide.take(chunk):
                    yield shown
        except Exception:  # not a cancellation, not GeneratorExit: BaseExceptions
            for shown in hide.flush():
                yield shown
            raise
        for shown in hide.flush():
            yield shown
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
