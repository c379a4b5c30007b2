"""Surrogate pairs split between two deltas, joined as they stream.

A server may write a character beyond U+FFFF (an emoji) as a JSON surrogate pair of
escapes, ``\\ud83d\\ude00``, and cut its answer between the two: each delta's text then
reads as a lone half (``json.loads`` reads an escaped lone surrogate), which the
terminal and the session's ``assistant/chunk`` events would show as the escapes, and
which a tool call's arguments would hand the tool (``write`` cannot write it as UTF-8).
``Pairs`` holds back a high half that ends a delta's text, or a call's piece of
arguments, and puts it before the next delta of the same kind (the next piece of the
same call), so that the pair streams as the one character. The assembled message joins
a text's halves too (``dsh.llm.assemble``), for any model's chunks.
"""

from __future__ import annotations

from typing import Final, final

from dsh.llm.base import Chunk, ReasoningDelta, TextDelta, ToolCallDelta, UsageChunk

__all__ = ["Pairs"]

_HIGH_FIRST: Final = "\ud800"
_HIGH_LAST: Final = "\udbff"
_NONE: Final[tuple[Chunk, ...]] = ()


def _ends_high(text: str) -> bool:
    """Whether ``text`` (a str, else it is passed on for the assembler to refuse) ends
    with the high half of a surrogate pair."""
    return text.__class__ is str and text != "" and _HIGH_FIRST <= text[-1] <= _HIGH_LAST


def _joined(high: str, text: str) -> str:
    """The high half ``high`` before ``text``: the one character of the pair if ``text``
    begins with its low half, else the lone half as it came."""
    if text and "\udc00" <= text[0] <= "\udfff":
        return chr(0x10000 + ((ord(high) - 0xD800) << 10) + ord(text[0]) - 0xDC00) + text[1:]
    return high + text


@final
class Pairs:
    """``take`` each chunk of an answer and yield the chunks it gives in its place;
    ``flush`` what is held when the block or the answer ends. A text's or reasoning's
    held half comes out as it came (a lone half: nothing to pair) before a chunk of
    another kind, and before a redacted reasoning block; a call's, at ``flush`` (a
    call's pieces are joined by index, whatever comes between). A ``UsageChunk``
    passes them by."""

    __slots__ = ("_args", "_held")

    def __init__(self) -> None:
        self._held: TextDelta | ReasoningDelta | None = None
        self._args: dict[int, str] = {}  # a call's held half, by index

    def take(self, chunk: Chunk) -> tuple[Chunk, ...]:
        held = self._held
        if held is None and isinstance(chunk, TextDelta):  # the usual case, first
            text = chunk.text
            if text.__class__ is not str or not text or not _HIGH_FIRST <= text[-1] <= _HIGH_LAST:
                return (chunk,)
        kind = chunk.__class__
        if kind is UsageChunk:
            return (chunk,)
        if kind is ToolCallDelta:
            assert isinstance(chunk, ToolCallDelta)
            if held is not None:
                self._held = None
                return (held, *self.take(chunk))
            return self._call(chunk)
        if kind is TextDelta:
            assert isinstance(chunk, TextDelta)
            text = chunk.text
            if held is not None:
                self._held = None
                if held.__class__ is not TextDelta:
                    return (held, *self.take(chunk))
                text = _joined(held.text, text)
                chunk = TextDelta(text)
            if _ends_high(text):
                self._held = TextDelta(text[-1])
                return (TextDelta(text[:-1]),) if len(text) > 1 else _NONE
            return (chunk,)
        if kind is ReasoningDelta:
            assert isinstance(chunk, ReasoningDelta)
            text, signature, redacted = chunk.text, chunk.signature, chunk.redacted
            if held is not None:
                self._held = None
                if held.__class__ is not ReasoningDelta or redacted is not None:
                    return (held, *self.take(chunk))
                text = _joined(held.text, text)
                chunk = ReasoningDelta(text, signature)
            if signature is None and redacted is None and _ends_high(text):
                self._held = ReasoningDelta(text[-1])
                return (ReasoningDelta(text[:-1]),) if len(text) > 1 else _NONE
            return (chunk,)
        if held is not None:
            self._held = None
            return (held, chunk)
        return (chunk,)

    def _call(self, chunk: ToolCallDelta) -> tuple[Chunk, ...]:
        args, index = self._args, chunk.index
        if not args and not _ends_high(chunk.arguments):  # the usual case
            return (chunk,)
        arguments = chunk.arguments
        high = args.pop(index, None)
        if high is not None:
            arguments = _joined(high, arguments)
        if _ends_high(arguments):
            args[index] = arguments[-1]
            arguments = arguments[:-1]
            if not arguments and chunk.id is None and chunk.name is None:
                return _NONE
        if arguments is chunk.arguments:
            return (chunk,)
        return (ToolCallDelta(index, chunk.id, chunk.name, arguments),)

    def flush(self) -> tuple[Chunk, ...]:
        """What is held (lone halves), to come out before the block's or answer's end."""
        held, self._held = self._held, None
        out = _NONE if held is None else (held,)
        if self._args:
            out += tuple(ToolCallDelta(i, arguments=half) for i, half in self._args.items())
            self._args = {}
        return out
