"""Turns a model's chunks into one assistant message."""

from __future__ import annotations

from typing import final

from dsh.errors import ModelError
from dsh.llm.base import Chunk, Finish, ReasoningDelta, TextDelta, ToolCallDelta, UsageChunk
from dsh.messages import (
    AssistantMessage,
    ContentBlock,
    ReasoningBlock,
    StopReason,
    TextBlock,
    ToolCall,
    Usage,
)

__all__ = ["Assembler"]

_NO_USAGE = Usage()


@final
class Assembler:
    """Accumulates chunks; ``message()`` builds the assistant message.

    Text and reasoning keep their order of appearance; tool calls are assembled by index
    and keep the raw argument text exactly as the model sent it.
    """

    __slots__ = ("_blocks", "_calls", "finish", "usage")

    def __init__(self) -> None:
        # (kind, parts) in order of first appearance; kind "text" | "reasoning" | "call"
        self._blocks: list[tuple[str, list[str], list[str | None]]] = []
        self._calls: dict[int, tuple[list[str | None], list[str]]] = {}
        self.usage = _NO_USAGE
        self.finish: StopReason | None = None

    def add(self, chunk: Chunk) -> None:
        if isinstance(chunk, TextDelta):
            self._text("text", chunk.text, None)
        elif isinstance(chunk, ToolCallDelta):
            entry = self._calls.get(chunk.index)
            if entry is None:
                entry = ([chunk.id, chunk.name], [chunk.arguments])
                self._calls[chunk.index] = entry
                self._blocks.append(("call", entry[1], entry[0]))
            else:
                meta, parts = entry
                if chunk.id is not None:
                    meta[0] = chunk.id
                if chunk.name is not None:
                    meta[1] = chunk.name
                parts.append(chunk.arguments)
        elif isinstance(chunk, ReasoningDelta):
            self._text("reasoning", chunk.text, chunk.signature)
        elif isinstance(chunk, UsageChunk):
            self.usage = chunk.usage
        elif isinstance(chunk, Finish):
            self.finish = chunk.reason

    def _text(self, kind: str, text: str, signature: str | None) -> None:
        if self._blocks and self._blocks[-1][0] == kind:
            self._blocks[-1][1].append(text)
            if signature is not None:
                self._blocks[-1][2][0] = signature
        else:
            self._blocks.append((kind, [text], [signature]))

    def message(self, model: str | None = None) -> AssistantMessage:
        """The assembled message; raises STREAM_CLOSED if no Finish arrived."""
        if self.finish is None:
            raise ModelError("STREAM_CLOSED", "the model's stream ended without a finish")
        content: list[ContentBlock] = []
        for kind, parts, meta in self._blocks:
            if kind == "text":
                content.append(TextBlock(text="".join(parts)))
            elif kind == "reasoning":
                content.append(ReasoningBlock(text="".join(parts), signature=meta[0]))
            else:
                call_id, name = meta
                if not call_id or not name:
                    raise ModelError(
                        "MALFORMED_RESPONSE", "a streamed tool call has no id or no name"
                    )
                content.append(ToolCall(id=call_id, name=name, arguments="".join(parts) or "{}"))
        return AssistantMessage(
            content=tuple(content), stop_reason=self.finish, usage=self.usage, model=model
        )
