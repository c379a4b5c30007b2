"""The adapter protocol: a model streams chunks for a request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from dsh.messages import ModelRequest, StopReason, Usage

__all__ = [
    "Chunk",
    "Finish",
    "Model",
    "ModelInfo",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallDelta",
    "UsageChunk",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str

    def to_data(self) -> dict[str, Any]:
        return {"kind": "text", "text": self.text}


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of reasoning. ``redacted`` is a whole block of encrypted reasoning
    (Anthropic's ``redacted_thinking``, with ``text`` empty): it is a block of its own,
    never merged with the reasoning around it. A ``signature`` with empty ``text``
    (Anthropic's ``signature_delta``) ends its block: reasoning after it starts the
    next one."""

    text: str
    signature: str | None = None
    redacted: str | None = None

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "reasoning", "text": self.text}
        if self.signature is not None:
            data["signature"] = self.signature
        if self.redacted is not None:
            data["redacted"] = self.redacted
        return data


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a streamed tool call: ``id``/``name`` arrive once, argument text after."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "tool_call", "index": self.index}
        if self.id is not None:
            data["id"] = self.id
        if self.name is not None:
            data["name"] = self.name
        if self.arguments:
            data["arguments"] = self.arguments
        return data


@dataclass(frozen=True, slots=True)
class UsageChunk:
    usage: Usage

    def to_data(self) -> dict[str, Any]:
        usage = self.usage
        return {
            "kind": "usage",
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
            },
        }


@dataclass(frozen=True, slots=True)
class Finish:
    """The end of a stream. A stream that ends without one failed (STREAM_CLOSED)."""

    reason: StopReason

    def to_data(self) -> dict[str, Any]:
        return {"kind": "finish", "reason": self.reason}


Chunk = TextDelta | ReasoningDelta | ToolCallDelta | UsageChunk | Finish


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the harness knows about a model: for compaction, limits and the CLI."""

    name: str
    provider: str
    context_window: int | None = None
    max_output_tokens: int | None = None


@runtime_checkable
class Model(Protocol):
    """A model a harness can call. Register with ``register_models(register)``.

    ``stream`` yields chunks and ends with ``Finish``; failures raise
    ``dsh.errors.ModelError`` with a code. Cancelling the iteration (an abort) must close
    whatever the model holds open (an HTTP stream) promptly.
    """

    @property
    def info(self) -> ModelInfo: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]: ...
