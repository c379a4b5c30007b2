"""What the model sees and says: content blocks, messages, tool calls and results, usage.

All models are frozen pydantic models: a hook that wants a change returns a copy
(``message.model_copy(update=...)``), so what was logged never changes under anyone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Final, Literal, TypeVar, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    model_serializer,
)

__all__ = [
    "AssistantMessage",
    "ContentBlock",
    "ContinuationDecision",
    "Message",
    "ModelRequest",
    "ProviderBlock",
    "ReasoningBlock",
    "RequestErrorDecision",
    "StopReason",
    "TextBlock",
    "ToolCall",
    "ToolResult",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
]

#: Why the model stopped a step. ``max_tokens`` means the answer was cut off;
#: ``paused``: the provider paused a long turn of its server tools (Anthropic's
#: ``pause_turn``), and the turn goes on with the answer sent back as it is.
StopReason = Literal["stop", "tool_calls", "max_tokens", "error", "aborted", "paused"]
#: The values of ``StopReason``.
STOP_REASONS: Final = frozenset(get_args(StopReason))


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


_M = TypeVar("_M", bound=BaseModel)


def trusted(cls: type[_M], values: dict[str, Any]) -> _M:
    """Build ``cls`` from ``values`` without validating them: for the loop's hot path,
    where every value is already of its field's type (built from validated objects).

    ``values`` must hold every field, in field order. Cheaper than ``model_construct``
    (which resolves aliases and defaults per call), and lighter on the garbage
    collector: the models are frozen, so every instance of a class shares one
    fields-set (pydantic copies it before changing it, in ``model_copy``).
    tests/core/test_hot_path_trusted.py checks the result equals the validated model for
    every type built this way.
    """
    model = _new(cls)  # BaseModel has no __new__ of its own (checked by the tests)
    _set_dict(model, values)
    try:
        fields = _ALL_FIELDS[cls]
    except KeyError:
        fields = _ALL_FIELDS[cls] = set(cls.model_fields)
    _set_fields_set(model, fields)
    _set_extra(model, None)
    _set_private(model, None)
    return model


_ALL_FIELDS: Final[dict[type[BaseModel], set[str]]] = {}
_new: Final = object.__new__
# BaseModel's slots, set through their descriptors (no attribute lookup per call)
_set_dict: Final = BaseModel.__dict__["__dict__"].__set__
_set_fields_set: Final = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra: Final = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private: Final = BaseModel.__dict__["__pydantic_private__"].__set__


class TextBlock(_Frozen):
    type: Literal["text"] = "text"
    text: str


class ReasoningBlock(_Frozen):
    """Model reasoning ("thinking"); ``signature`` is the provider's opaque proof, if any.

    ``redacted`` is reasoning the provider sent encrypted (Anthropic's
    ``redacted_thinking``): opaque data to send back as it came, with ``text`` empty.
    It is serialised only when set, so data without it reads and writes as before.
    """

    type: Literal["reasoning"] = "reasoning"
    text: str
    signature: str | None = None
    redacted: str | None = None

    @model_serializer(mode="wrap")
    def _drop_unset_redacted(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and "redacted" in data and data["redacted"] is None:
            del data["redacted"]
        return data


class ToolCall(_Frozen):
    """A tool call as the model made it. ``arguments`` is the raw JSON text it sent."""

    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: str = "{}"


class ProviderBlock(_Frozen):
    """A block of a provider's own that dsh does not interpret, kept whole: Anthropic's
    server tools' ``server_tool_use`` (its streamed input put together) and
    ``web_search_tool_result``, say. ``provider`` names the API that made it (the
    adapter's: ``"anthropic"``); ``data`` is the block's JSON as the API sent it.

    That provider's request builder sends it back verbatim, in its place; every other
    provider leaves it out (it is that API's own format, often with opaque data in it,
    and not words the model said), and it is never a tool call of dsh's.
    """

    type: Literal["provider"] = "provider"
    provider: str = Field(min_length=1)
    data: dict[str, JsonValue]


ContentBlock = Annotated[
    TextBlock | ReasoningBlock | ToolCall | ProviderBlock, Field(discriminator="type")
]


class Usage(_Frozen):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        # both operands are validated already: skip re-validation on this hot path (and
        # read the fields from __dict__: a pydantic attribute costs several dict lookups)
        a, b = self.__dict__, other.__dict__
        return trusted(
            Usage,
            {
                "input_tokens": a["input_tokens"] + b["input_tokens"],
                "output_tokens": a["output_tokens"] + b["output_tokens"],
                "cache_read_tokens": a["cache_read_tokens"] + b["cache_read_tokens"],
                "cache_write_tokens": a["cache_write_tokens"] + b["cache_write_tokens"],
            },
        )

    def to_data(self) -> dict[str, int]:
        """``model_dump()``, without the serializer's per-call cost (four ints)."""
        d = self.__dict__
        return {
            "input_tokens": d["input_tokens"],
            "output_tokens": d["output_tokens"],
            "cache_read_tokens": d["cache_read_tokens"],
            "cache_write_tokens": d["cache_write_tokens"],
        }


class UserMessage(_Frozen):
    role: Literal["user"] = "user"
    content: str


class AssistantMessage(_Frozen):
    role: Literal["assistant"] = "assistant"
    content: tuple[ContentBlock, ...] = ()
    stop_reason: StopReason = "stop"
    usage: Usage = Usage()
    model: str | None = None

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]

    def to_data(self) -> dict[str, Any]:
        """``model_dump(mode="json")``, built directly when every value has the type its
        field declares (always, for messages the core assembles); anything else (a
        subclass, a block type of a plugin, a value a ``model_copy`` put in unchecked)
        goes through pydantic's serializer."""
        content: list[dict[str, Any]] = []
        for block in self.content:
            kind = type(block)
            d = block.__dict__
            if kind is TextBlock and type(d["text"]) is str:
                content.append({"type": "text", "text": d["text"]})
            elif (
                kind is ToolCall and type(d["id"]) is type(d["name"]) is type(d["arguments"]) is str
            ):
                content.append(
                    {
                        "type": "tool_call",
                        "id": d["id"],
                        "name": d["name"],
                        "arguments": d["arguments"],
                    }
                )
            elif (
                kind is ReasoningBlock
                and type(d["text"]) is str
                and (d["signature"] is None or type(d["signature"]) is str)
                and (d["redacted"] is None or type(d["redacted"]) is str)
            ):
                block_data = {"type": "reasoning", "text": d["text"], "signature": d["signature"]}
                if d["redacted"] is not None:
                    block_data["redacted"] = d["redacted"]
                content.append(block_data)
            elif kind is ProviderBlock:  # a copy: the log's data is not the block's
                content.append(block.model_dump(mode="json"))
            else:
                return self.model_dump(mode="json")
        d = self.__dict__
        usage, model = d["usage"], d["model"]
        if (
            type(self) is not AssistantMessage
            or type(usage) is not Usage
            or d["stop_reason"] not in STOP_REASONS
            or not (model is None or type(model) is str)
        ):
            return self.model_dump(mode="json")
        return {
            "role": "assistant",
            "content": content,
            "stop_reason": d["stop_reason"],
            "usage": usage.to_data(),
            "model": model,
        }

    @property
    def is_empty(self) -> bool:
        """True when there is nothing a model could be shown again."""
        for block in self.content:  # a loop: no generator per call (hot path)
            if not isinstance(block, _TEXTUAL) or block.text:
                return False
            if isinstance(block, ReasoningBlock) and block.redacted:
                return False
        return True


_TEXTUAL: Final = (TextBlock, ReasoningBlock)  # a tuple: ``A | B`` is built per call


class ToolResult(_Frozen):
    """The outcome of one tool call; ``is_error`` results are shown to the model as errors."""

    call_id: str
    content: str
    is_error: bool = False


class ToolResultMessage(_Frozen):
    role: Literal["tool"] = "tool"
    call_id: str
    name: str
    content: str
    is_error: bool = False


Message = Annotated[UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")]


class ToolSpec(_Frozen):
    """A tool as the model is told about it."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class ModelRequest(_Frozen):
    """One model call. ``model`` names a registered model; None means the agent's default."""

    model: str | None = None
    system: str = ""
    #: A snapshot of the history (the loop passes an O(1) ``HistoryView``); plugins
    #: replacing it may pass any sequence.
    messages: Sequence[Message] = ()
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class ContinuationDecision(_Frozen):
    """Whether a turn takes another step. A ``reason`` on continue is logged as steering."""

    action: Literal["stop", "continue"]
    reason: str | None = None


class RequestErrorDecision(_Frozen):
    """What to do when a model call fails: ``fail`` ends the turn with the error,
    ``retry`` calls the model again for the same step (after ``agent_request`` ran
    again, so a plugin can shrink the request first)."""

    action: Literal["fail", "retry"]
    reason: str | None = None
