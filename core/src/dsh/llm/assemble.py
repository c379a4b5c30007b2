"""Turns a model's chunks into one assistant message."""

from __future__ import annotations

import re
from typing import Final, final

from pydantic import ValidationError

from dsh._json import check_json
from dsh.errors import EventDataError, ModelError
from dsh.llm._hidden_args import HiddenArguments
from dsh.llm.base import (
    Chunk,
    Finish,
    ProviderBlockChunk,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from dsh.messages import (
    STOP_REASONS,
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    ReasoningBlock,
    StopReason,
    TextBlock,
    ToolCall,
    Usage,
    trusted,
)

__all__ = ["Assembler"]

_NO_USAGE = Usage()
_NONE_HIDDEN: Final[frozenset[str]] = frozenset()
# A UTF-16 surrogate pair: a character beyond U+FFFF that a server wrote as two JSON
# escapes (\ud83d\ude00) and sent in two deltas, each decoded to a lone half.
_PAIR: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _paired(text: str) -> str:
    """``text`` (of several deltas, not ASCII) with each surrogate pair made the one
    character it stands for; a lone half stays. Looked for only when ``text`` holds a
    surrogate, which UTF-8 cannot encode: ordinary text costs one encode per message,
    never anything per chunk."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return _PAIR.sub(_joined, text)
    return text


def _joined(pair: re.Match[str]) -> str:
    both = pair[0]
    return chr(0x10000 + ((ord(both[0]) - 0xD800) << 10) + ord(both[1]) - 0xDC00)


def _malformed(what: str) -> ModelError:
    return ModelError("MALFORMED_RESPONSE", f"the model streamed {what}")


def _same(had: str | None, value: str, what: str, index: int) -> str | None:
    """A call's id or name (``what``), which it had as ``had`` or not yet (None, or an
    empty one: no call keeps that), after a piece that brings ``value`` (an empty one
    says nothing new)."""
    if had and value and had != value:
        raise _malformed(
            f"another {what} {value!r:.60} for the call at index {index}, "
            f"whose {what} is {had!r:.60}"
        )
    return value or had


def _provider_block(chunk: ProviderBlockChunk) -> ProviderBlock:
    """The block of ``chunk``, checked (a third-party model builds chunks): a provider
    name, and data that is lossless JSON (it goes into the log as it is)."""
    provider, data = chunk.provider, chunk.data
    if type(provider) is not str or not provider or type(data) is not dict:
        raise _malformed(f"a provider block without a provider name or a dict: {chunk!r:.80}")
    try:
        check_json(data, "assistant/chunk", "data.data")
        return ProviderBlock(provider=provider, data=data)
    except (EventDataError, ValidationError) as exc:
        raise _malformed(f"a provider block whose data is not JSON: {exc}") from None


@final
class Assembler:
    """Accumulates chunks; ``message()`` builds the assistant message.

    Text, reasoning and a provider's own blocks keep their order of appearance; tool
    calls are assembled by index and keep the raw argument text as the model sent it
    (a surrogate pair split between two pieces made the one character, as in text).
    Every chunk's fields are type-checked on the way in (chunks are plain dataclasses a
    third-party model builds), so the chunk's ``to_data()`` is JSON and the message can
    be built without validating it again.
    """

    __slots__ = ("_blocks", "_calls", "_hidden", "_sealed", "detail", "finish", "usage")

    def __init__(self) -> None:
        # (kind, parts, meta) in order of first appearance; kind "text" | "reasoning" |
        # "redacted" | "call"; meta is [signature], [signature, redacted] or [call id,
        # name]; a provider's own block comes whole, and is kept as its ProviderBlock
        self._blocks: list[tuple[str, list[str], list[str | None]] | ProviderBlock] = []
        self._calls: dict[int, tuple[list[str | None], list[str]]] = {}
        self._sealed = -1  # the place of a reasoning block its signature ended
        self._hidden: set[int] = set()  # calls with a secret hidden from their arguments
        self.usage = _NO_USAGE
        self.finish: StopReason | None = None
        self.detail: str | None = None  # the provider's own word for the stop (Finish)

    def add(self, chunk: Chunk) -> None:
        """Take one chunk; a chunk whose fields have the wrong types is MALFORMED_RESPONSE."""
        if isinstance(chunk, TextDelta):
            if type(chunk.text) is not str:
                raise _malformed(f"text that is not a str: {chunk.text!r:.60}")
            self._text("text", chunk.text, None)
        elif isinstance(chunk, ToolCallDelta):
            self._call(chunk)
        elif isinstance(chunk, UsageChunk):
            if type(chunk.usage) is not Usage:
                raise _malformed(f"usage that is not a dsh Usage: {chunk.usage!r:.60}")
            self.usage = chunk.usage
        elif isinstance(chunk, Finish):
            if chunk.reason not in STOP_REASONS:
                raise _malformed(f"an unknown stop reason {chunk.reason!r:.60}")
            if not (chunk.detail is None or type(chunk.detail) is str):
                raise _malformed(f"a finish detail that is not a str: {chunk.detail!r:.60}")
            self.finish, self.detail = chunk.reason, chunk.detail
        elif isinstance(chunk, ReasoningDelta):
            signature, redacted = chunk.signature, chunk.redacted
            if type(chunk.text) is not str or not (signature is None or type(signature) is str):
                raise _malformed(f"reasoning that is not a str: {chunk!r:.80}")
            if redacted is None:
                self._text("reasoning", chunk.text, signature)
            elif type(redacted) is str:  # a block of its own: the reasoning after it is too
                self._blocks.append(("redacted", [chunk.text], [signature, redacted]))
            else:
                raise _malformed(f"redacted reasoning that is not a str: {chunk!r:.80}")
        elif isinstance(chunk, ProviderBlockChunk):
            self._blocks.append(_provider_block(chunk))
        else:
            raise _malformed(f"{type(chunk).__name__}, which is not a dsh chunk")

    def _call(self, chunk: ToolCallDelta) -> None:
        index, call_id, name, arguments = chunk.index, chunk.id, chunk.name, chunk.arguments
        if (
            type(index) is not int
            or type(arguments) is not str
            or not (call_id is None or type(call_id) is str)
            or not (name is None or type(name) is str)
        ):
            raise _malformed(f"a tool call piece with wrong field types: {chunk!r:.80}")
        if isinstance(chunk, HiddenArguments):
            self._hidden.add(index)
        entry = self._calls.get(index)
        if entry is None:
            entry = ([call_id, name], [arguments])
            self._calls[index] = entry
            self._blocks.append(("call", entry[1], entry[0]))
        else:
            meta, parts = entry
            # an id and a name come once (the same again is fine): another is malformed,
            # not taken over the first
            if call_id is not None:
                meta[0] = _same(meta[0], call_id, "id", index)
            if name is not None:
                meta[1] = _same(meta[1], name, "name", index)
            parts.append(arguments)

    def _text(self, kind: str, text: str, signature: str | None) -> None:
        blocks = self._blocks
        last = len(blocks) - 1
        # a signature (Anthropic's signature_delta, the last piece of a thinking block,
        # or a block sent whole at its start, text and signature together) ends its
        # block: reasoning after it is the next block, which the API wants back apart,
        # with its own signature
        previous = blocks[-1] if blocks else None
        if isinstance(previous, tuple) and previous[0] == kind and self._sealed != last:
            previous[1].append(text)
            if signature is not None:
                previous[2][0] = signature
        else:
            blocks.append((kind, [text], [signature]))
            last += 1
        if signature is not None:
            self._sealed = last

    def message(self, model: str | None = None) -> AssistantMessage:
        """The assembled message; raises STREAM_CLOSED if no Finish arrived."""
        if self.finish is None:
            raise ModelError("STREAM_CLOSED", "the model's stream ended without a finish")
        content: list[ContentBlock] = []
        for entry in self._blocks:
            if isinstance(entry, ProviderBlock):
                content.append(entry)
                continue
            kind, parts, meta = entry
            if len(parts) == 1:
                text = parts[0]
            else:
                text = "".join(parts)
                if not text.isascii():  # isascii: O(1)
                    text = _paired(text)  # a pair split between two deltas or pieces
            if kind == "text":
                content.append(trusted(TextBlock, {"type": "text", "text": text}))
            elif kind == "reasoning":
                block = {"type": "reasoning", "text": text, "signature": meta[0], "redacted": None}
                content.append(trusted(ReasoningBlock, block))
            elif kind == "redacted":
                block = {
                    "type": "reasoning",
                    "text": text,
                    "signature": meta[0],
                    "redacted": meta[1],
                }
                content.append(trusted(ReasoningBlock, block))
            else:
                call_id, name = meta
                if not call_id or not name:
                    raise ModelError(
                        "MALFORMED_RESPONSE", "a streamed tool call has no id or no name"
                    )
                call = {"type": "tool_call", "id": call_id, "name": name, "arguments": text or "{}"}
                content.append(trusted(ToolCall, call))
        values = {
            "role": "assistant",
            "content": tuple(content),
            "stop_reason": self.finish,
            "usage": self.usage,
            "model": model,
        }
        return trusted(AssistantMessage, values)

    def hidden_calls(self) -> frozenset[str]:
        """The ids of the calls that had a secret hidden (a piece of theirs was a
        ``HiddenArguments``): the step does not run them."""
        if not self._hidden:  # the usual case: one set for all
            return _NONE_HIDDEN
        return frozenset(self._calls[index][0][0] or "" for index in self._hidden)

    def cut_off(self, reason: StopReason, model: str | None = None) -> AssistantMessage | None:
        """The text streamed so far, for a stream that stopped before it finished (an
        abort, an error): its text blocks only, since a tool call's arguments may be half
        written and reasoning lacks the signature a provider checks. None when no text
        other than whitespace arrived."""
        texts = (
            "".join(entry[1])
            for entry in self._blocks
            if isinstance(entry, tuple) and entry[0] == "text"
        )
        content = tuple(
            trusted(TextBlock, {"type": "text", "text": text if text.isascii() else _paired(text)})
            for text in texts
        )
        if not any(block.text.strip() for block in content):
            return None
        values = {
            "role": "assistant",
            "content": content,
            "stop_reason": reason,
            "usage": self.usage,
            "model": model,
        }
        return trusted(AssistantMessage, values)
