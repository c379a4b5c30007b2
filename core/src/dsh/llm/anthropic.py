"""Anthropic Messages, streamed: ``POST {base_url}/messages`` with SSE events.

Also served by llama.cpp's server (``/v1/messages``) and other Anthropic-compatible
endpoints; ``base_url`` includes the version prefix (``https://api.anthropic.com/v1``).
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, AsyncIterator
from json import dumps, loads
from typing import Any, Final

from dsh._provider_table import BUILT_IN, KEY_HEADERS
from dsh.errors import ModelError
from dsh.llm._anthropic_messages import EMPTY_ERROR as EMPTY_ERROR
from dsh.llm._anthropic_messages import EMPTY_PROMPT as EMPTY_PROMPT
from dsh.llm._anthropic_messages import PROVIDER, messages
from dsh.llm._counts import count, mapping
from dsh.llm._errors import error_from_body, malformed
from dsh.llm._http import HttpModel
from dsh.llm._pairs import Pairs
from dsh.llm._sse import FINISH_GRACE, ended_early
from dsh.llm.base import (
    Chunk,
    Finish,
    ProviderBlockChunk,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from dsh.messages import ModelRequest, StopReason, Usage

__all__ = ["ANTHROPIC_VERSION", "PROVIDER", "AnthropicModel"]

#: The ``anthropic-version`` header sent (override it with ``headers`` in the config).
ANTHROPIC_VERSION: Final = "2023-06-01"
#: ``max_tokens`` is required by the API; used when neither request nor config sets it.
DEFAULT_MAX_TOKENS: Final = 4096
#: The ``stop_reason``s dsh knows, looked up in lower case. Any other is the model's
#: end, as ``end_turn`` (its ``tool_use`` blocks each ended with their own event).
_STOP_REASONS: Final[dict[str, StopReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "paused",  # a server tool's long turn: sent back, the API goes on
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "error",
}

#: The content blocks dsh reads. Any other (a server tool's: ``server_tool_use``, whose
#: input streams as ``input_json_delta`` like a ``tool_use``'s, ``web_search_tool_result``,
#: ``code_execution_tool_result``, ``mcp_tool_use``...) is kept whole as a
#: ``ProviderBlock`` (its input pieces put together) and sent back as it came: the
#: server ran that tool, dsh has nothing to run, and the model needs to see it again.
_READ_BLOCKS: Final = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})


class AnthropicModel(HttpModel):
    """A model behind the Anthropic Messages API (``x-api-key`` authentication)."""

    default_base_url = BUILT_IN["anthropic"].base_url
    protocol = "anthropic"

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for ``request`` (``request.options`` are merged in last, e.g.
        ``{"thinking": {"type": "enabled", "budget_tokens": 2048}}``)."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "max_tokens": request.max_tokens or self.config.max_output_tokens or DEFAULT_MAX_TOKENS,
            "messages": messages(request.messages),
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                if t.description
                else {"name": t.name, "input_schema": t.parameters}
                for t in request.tools
            ]
        body.update(request.options)
        return body

    async def chunks(self, request: ModelRequest) -> AsyncGenerator[Chunk, None]:
        key = self.api_key()
        headers = {
            "anthropic-version": ANTHROPIC_VERSION,
            **self.key_header(key, KEY_HEADERS["anthropic"]),
        }
        body = self.request_body(request)
        usage: dict[str, Any] = {}
        stop: StopReason = "stop"
        done = False
        # the blocks dsh does not read, by index: the block's start, its input pieces
        own: dict[int, tuple[dict[str, Any], list[str]]] = {}
        # a tool_use's input sent whole in its start, by call: sent at the block's end,
        # unless input_json_delta pieces came, which replace it (_block_start)
        whole: dict[int, str] = {}
        # the open tool_use blocks: the server's block index -> dsh's call index, a new
        # one per block (a server that reuses a block index still gives separate calls)
        calls: dict[int, int] = {}
        started = 0  # tool_use blocks so far
        reported = False  # a message_delta gave the usage
        ended = False  # a message_delta said the stop_reason, and no block came after it
        pairs = Pairs()  # an emoji's surrogate pair split between two deltas
        try:
            async with self.events("/messages", body, headers, key) as events:
                # after the stop_reason, what follows is waited for FINISH_GRACE at most: a
                # server that never sends message_stop nor ends the response has finished;
                # until then each event is read as it comes (the events' own iterator)
                paced = events.within()
                source: AsyncIterator[str] | None = aiter(events)
                while source is not None:
                    after, source = source, None
                    async for data in after:
                        try:
                            item = loads(data)
                            # {"error": ...} without a type: an error in the OpenAI shape (and
                            # what the SSE parser makes of an error event that lacks one)
                            kind = (
                                item["type"] if "type" in item or "error" not in item else "error"
                            )
                            if ended and kind.startswith("content_block"):
                                ended, paced.grace = False, math.inf  # an early message_delta
                            if kind == "content_block_delta":
                                if own and item.get("index") in own:
                                    _own_delta(own[item["index"]], item["delta"])
                                    continue  # a server tool's input, say: not a call of dsh's
                                delta = item["delta"]
                                what = delta["type"]
                                if what == "text_delta":
                                    for out in pairs.take(TextDelta(delta["text"])):
                                        yield out
                                elif what == "input_json_delta":
                                    piece = delta["partial_json"]
                                    call = _open_call(calls, item["index"])
                                    if whole and piece:  # the streamed input, not the start's
                                        whole.pop(call, None)
                                    for out in pairs.take(ToolCallDelta(call, arguments=piece)):
                                        yield out
                                elif what == "thinking_delta":
                                    for out in pairs.take(ReasoningDelta(delta["thinking"])):
                                        yield out
                                elif what == "signature_delta":
                                    signed = ReasoningDelta("", signature=delta["signature"])
                                    for out in pairs.take(signed):
                                        yield out
                            elif kind == "content_block_start":
                                for held in pairs.flush():  # a server that sent no block stop
                                    yield held
                                block = item["content_block"]
                                calls.pop(item["index"], None)  # a new block at its index
                                if block["type"] not in _READ_BLOCKS:
                                    own[item["index"]] = (block, [])
                                    continue
                                chunk = _block_start(started, block)
                                if block["type"] == "tool_use":
                                    calls[item["index"]] = started
                                    if block.get("input"):
                                        whole[started] = dumps(block["input"])
                                    started += 1
                                for out in pairs.take(chunk) if chunk is not None else ():
                                    yield out
                            elif kind == "content_block_stop":
                                for held in pairs.flush():  # a lone half: nothing to pair
                                    yield held
                                if own and item.get("index") in own:
                                    yield _own_block(own.pop(item["index"]))
                                elif (call := calls.pop(item.get("index"), -1)) in whole:
                                    yield ToolCallDelta(call, arguments=whole.pop(call))
                            elif kind == "message_start":
                                usage.update(mapping(self.name, item["message"], "usage"))
                            elif kind == "message_delta":
                                for left in pairs.flush():
                                    yield left
                                for left in _unstopped(
                                    own, whole
                                ):  # a server that sent no block stop
                                    yield left
                                reason = item["delta"].get("stop_reason")
                                if reason:
                                    if not isinstance(reason, str):
                                        raise TypeError("its stop_reason is not text")
                                    stop = _STOP_REASONS.get(reason.lower(), "stop")
                                    ended, paced.grace = True, FINISH_GRACE
                                # the newer API repeats counts here, some null: a null
                                # does not replace message_start's count
                                later = mapping(self.name, item, "usage")
                                usage.update((k, v) for k, v in later.items() if v is not None)
                                reported = True
                                yield UsageChunk(_usage(self.name, usage))
                            elif kind == "message_stop":
                                for left in pairs.flush():
                                    yield left
                                for left in _unstopped(own, whole):
                                    yield left
                                if usage and not reported:  # message_start's, with no message_delta
                                    yield UsageChunk(_usage(self.name, usage))
                                done = True
                                await self.drain(events)
                                break
                            elif kind == "error":
                                raise error_from_body(
                                    self.name,
                                    item,
                                    secret=self.error_secrets(key),
                                    server=self.server,
                                )
                        except (ValueError, AttributeError, TypeError, KeyError, IndexError) as exc:
                            what, said = events.unreadable("event", data)
                            raise malformed(
                                self.name, what, said, exc, self.error_secrets(key), self.server
                            ) from exc
                        if ended and after is not paced:
                            source = paced  # the stop_reason: the rest within the grace
                            break
            if not (done or ended):  # after the stop_reason, the end is the answer's
                raise ended_early(
                    self.name, "message_stop", events, self.error_secrets(key), self.server
                )
        except ModelError:  # cut off, reset, an error event: the counts so far stay
            if usage and not reported:  # with the cut answer (message_start's)
                yield UsageChunk(_usage(self.name, usage))
            raise
        # the API's own word: "refusal" is the one stop reason it has mapped to "error"
        yield Finish(stop, "refusal" if stop == "error" else None)


def _block_start(index: int, block: dict[str, Any]) -> Chunk | None:
    kind = block["type"]
    if kind == "tool_use":
        # input {} from Anthropic; a server that sends it whole here has it sent at the
        # block's end, unless input_json_delta pieces follow: they are the input then;
        # one without an id or a name is refused by the assembler (no id is made here)
        return ToolCallDelta(index, id=block.get("id") or None, name=block.get("name") or None)
    if kind == "text" and block.get("text"):
        return TextDelta(block["text"])
    if kind == "thinking" and block.get("thinking"):
        return ReasoningDelta(block["thinking"], signature=block.get("signature") or None)
    if kind == "redacted_thinking":  # whole here, no deltas follow; sent back as it came
        return ReasoningDelta("", redacted=block["data"])
    return None  # an empty start


def _open_call(calls: dict[int, int], index: int) -> int:
    """The call of the ``tool_use`` block open at ``index``: a piece of input for a block
    that has ended, or never started, belongs to no call."""
    if index not in calls:
        raise ValueError(f"no tool_use block is open at its index {index!r}")
    return calls[index]


def _unstopped(
    own: dict[int, tuple[dict[str, Any], list[str]]], whole: dict[int, str]
) -> list[Chunk]:
    """What the blocks left without a ``content_block_stop`` hold, in their order: a
    block dsh does not read, a tool_use's input sent whole in its start."""
    left: list[Chunk] = [_own_block(own.pop(index)) for index in sorted(own)]
    left.extend(ToolCallDelta(index, arguments=whole.pop(index)) for index in sorted(whole))
    return left


def _own_delta(own: tuple[dict[str, Any], list[str]], delta: dict[str, Any]) -> None:
    """Keep a piece of a block dsh does not read: ``input_json_delta`` (a server tool's
    input) is the one kind such blocks stream; any other is not kept."""
    if delta["type"] == "input_json_delta":
        own[1].append(delta["partial_json"])


def _own_block(own: tuple[dict[str, Any], list[str]]) -> ProviderBlockChunk:
    """The whole block, its streamed input (if any) in place of the start's ``{}``."""
    block, pieces = own
    text = "".join(pieces)
    if text:
        block = {**block, "input": loads(text)}
    return ProviderBlockChunk(PROVIDER, block)


def _usage(model: str, usage: dict[str, Any]) -> Usage:
    """The counts of ``usage``; one that is not a count is 0 (``dsh.llm._counts``).
    Anthropic counts cached prompt tokens apart; dsh's input_tokens is the whole prompt."""
    read = count(model, usage, "cache_read_input_tokens")
    written = count(model, usage, "cache_creation_input_tokens")
    return Usage(
        input_tokens=count(model, usage, "input_tokens") + read + written,
        output_tokens=count(model, usage, "output_tokens"),
        cache_read_tokens=read,
        cache_write_tokens=written,
    )
