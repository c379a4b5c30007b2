"""Hiding the model API keys in an answer's chunks as they stream.

An ``AnswerRedactor`` has a ``StreamRedactor`` (``dsh.llm._redact_stream``) for all the
text of an answer, one for all its reasoning and one for each tool call's arguments, as
consumers join them (whatever chunks of another kind come between). ``hidden`` streams
a model's answer through one: ``HttpModel.stream``'s and a plugin's model's
(``dsh.llm.registry``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Final, final

from dsh._secrets import redact
from dsh.llm._hidden_args import call_piece, marked
from dsh.llm._redact_json import JsonEscapes, hidden_in, json_secrets
from dsh.llm._redact_stream import StreamRedactor
from dsh.llm.base import (
    Chunk,
    Finish,
    ProviderBlockChunk,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)

__all__ = ["AnswerRedactor", "hidden"]


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
