"""The adapter protocol: a model streams chunks for a request."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

from dsh._config_models import DEFAULT_MAX_WAIT
from dsh.messages import ModelRequest, StopReason, Usage

__all__ = [
    "Chunk",
    "Finish",
    "Model",
    "ModelInfo",
    "ProviderBlockChunk",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallDelta",
    "UsageChunk",
]


# The chunk classes are frozen dataclasses with an ``__init__`` of their own: it sets
# each slot through the slot's own setter (bound once, below each class) instead of the
# generated ``object.__setattr__(self, name, value)`` per field, which costs a global
# lookup and a name lookup each time. An adapter makes several chunks per reply, so
# this is on every turn's path. Equality, hashing, ``repr`` and freezing stay the
# dataclass's.


def _setter(cls: type, name: str) -> Callable[[object, object], None]:
    """The setter of ``cls``'s slot ``name`` (it skips the frozen ``__setattr__``)."""
    return cast("Callable[[object, object], None]", cls.__dict__[name].__set__)


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str

    def __init__(self, text: str) -> None:
        _text_text(self, text)

    def to_data(self) -> dict[str, Any]:
        return {"kind": "text", "text": self.text}


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of reasoning. ``redacted`` is a whole block of encrypted reasoning
    (Anthropic's ``redacted_thinking``, with ``text`` empty): it is a block of its own,
    never merged with the reasoning around it. A ``signature`` ends its block, with
    empty ``text`` (Anthropic's ``signature_delta``) or with the block's whole text (a
    block sent whole at its start): reasoning after it starts the next one."""

    text: str
    signature: str | None = None
    redacted: str | None = None

    def __init__(
        self, text: str, signature: str | None = None, redacted: str | None = None
    ) -> None:
        _reasoning_text(self, text)
        _reasoning_signature(self, signature)
        _reasoning_redacted(self, redacted)

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

    def __init__(
        self, index: int, id: str | None = None, name: str | None = None, arguments: str = ""
    ) -> None:
        _call_index(self, index)
        _call_id(self, id)
        _call_name(self, name)
        _call_arguments(self, arguments)

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
class ProviderBlockChunk:
    """A provider's own block, whole (an adapter puts its streamed pieces together
    first): it becomes a ``ProviderBlock`` in its place among the answer's blocks.
    ``provider`` names the API (``"anthropic"``), ``data`` is the block's JSON."""

    provider: str
    data: dict[str, Any]

    def __init__(self, provider: str, data: dict[str, Any]) -> None:
        _block_provider(self, provider)
        _block_data(self, data)

    def to_data(self) -> dict[str, Any]:
        return {"kind": "provider_block", "provider": self.provider, "data": self.data}


@dataclass(frozen=True, slots=True)
class UsageChunk:
    usage: Usage

    def __init__(self, usage: Usage) -> None:
        _usage_usage(self, usage)

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
    """The end of a stream. A stream that ends without one failed (STREAM_CLOSED).
    ``detail``: the provider's own word for the stop, if the adapter gives it (the
    OpenAI-compatible ``finish_reason`` of a stop reason ``error``: ``content_filter``,
    ``insufficient_system_resource``...); a turn ended REFUSED names it."""

    reason: StopReason
    detail: str | None = None

    def __init__(self, reason: StopReason, detail: str | None = None) -> None:
        _finish_reason(self, reason)
        _finish_detail(self, detail)

    def to_data(self) -> dict[str, Any]:
        if self.detail is None:
            return {"kind": "finish", "reason": self.reason}
        return {"kind": "finish", "reason": self.reason, "detail": self.detail}


_text_text = _setter(TextDelta, "text")
_reasoning_text = _setter(ReasoningDelta, "text")
_reasoning_signature = _setter(ReasoningDelta, "signature")
_reasoning_redacted = _setter(ReasoningDelta, "redacted")
_call_index = _setter(ToolCallDelta, "index")
_call_id = _setter(ToolCallDelta, "id")
_call_name = _setter(ToolCallDelta, "name")
_call_arguments = _setter(ToolCallDelta, "arguments")
_block_provider = _setter(ProviderBlockChunk, "provider")
_block_data = _setter(ProviderBlockChunk, "data")
_usage_usage = _setter(UsageChunk, "usage")
_finish_reason = _setter(Finish, "reason")
_finish_detail = _setter(Finish, "detail")

Chunk = TextDelta | ReasoningDelta | ToolCallDelta | ProviderBlockChunk | UsageChunk | Finish


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the harness knows about a model: for compaction, limits and the CLI.
    ``max_wait``: the longest wait in seconds a server may ask for (``retry_after``)
    that is waited for before calling the model again (the loop's step retry too)."""

    name: str
    provider: str
    context_window: int | None = None
    max_output_tokens: int | None = None
    max_wait: float = DEFAULT_MAX_WAIT


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
