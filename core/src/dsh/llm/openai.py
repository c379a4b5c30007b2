"""OpenAI-compatible chat completions, streamed: OpenAI, DeepSeek, vLLM, llama.cpp, Ollama,
OpenRouter and any server speaking ``POST {base_url}/chat/completions`` with SSE.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from json import loads
from typing import Any, Final

from dsh._provider_table import KEY_HEADERS
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm._call_slots import CallSlots
from dsh.llm._counts import count, mapping
from dsh.llm._errors import error_from_body, malformed
from dsh.llm._finish_reasons import finish_detail, stop_reason
from dsh.llm._http import HttpModel
from dsh.llm._not_streamed import error_object
from dsh.llm._origin import Origin
from dsh.llm._pairs import Pairs
from dsh.llm._refused_fields import refusal_note, refuses_reasoning
from dsh.llm._sse import FINISH_GRACE, ended_early
from dsh.llm.base import Chunk, Finish, ReasoningDelta, TextDelta, UsageChunk
from dsh.messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    StopReason,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

__all__ = ["OpenAICompatibleModel"]

#: Data this short may be ``[DONE]`` with white space around it: only such data is
#: stripped to be compared (no chunk is copied for it).
_DONE_SPACED: Final = 32


def _asks_usage(body: Mapping[str, Any]) -> bool:
    """Whether ``body`` asks for the usage chunk (``stream_options.include_usage``), which
    comes after the finish_reason's, the last before ``[DONE]``."""
    options = body.get("stream_options")
    return isinstance(options, Mapping) and options.get("include_usage") is True


class OpenAICompatibleModel(HttpModel):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``send_reasoning``: send reasoning back as ``reasoning_content`` on every assistant
    message of an exchange (the messages between two user messages) in which the model
    called tools and reasoned, as DeepSeek's thinking mode requires (an empty one where
    it had none); the reasoning of other exchanges is never sent. Default: the config's
    ``send_reasoning`` if set, else on, except for ``provider: openai`` and a base_url
    on ``mistral.ai`` (its API refuses the field).
    ``max_tokens_field``: the body key for the output cap; default the config's
    ``max_tokens_field`` if set, else ``max_tokens``, or ``max_completion_tokens`` for
    ``provider: openai``.
    ``include_usage``: ask for the usage chunk (``stream_options.include_usage``);
    ``False`` sends no ``stream_options``. Default: the config's, else on.
    """

    default_base_url = None
    protocol = "openai"

    def __init__(
        self,
        name: str,
        config: ModelConfig,
        *,
        send_reasoning: bool | None = None,
        max_tokens_field: str | None = None,
        include_usage: bool | None = None,
        env: Mapping[str, str] | None = None,
        backoff: float = 0.5,
        max_wait: float | None = None,
        key_optional: bool = False,
        origin: Origin | None = None,
    ) -> None:
        super().__init__(
            name,
            config,
            env=env,
            backoff=backoff,
            max_wait=max_wait,
            key_optional=key_optional,
            origin=origin,
        )
        openai = config.provider == "openai"
        if send_reasoning is None:
            send_reasoning = config.send_reasoning
        if send_reasoning is None:
            send_reasoning = not (openai or refuses_reasoning(self.base_url))
        self.send_reasoning = send_reasoning
        self.max_tokens_field = (
            max_tokens_field
            or config.max_tokens_field
            or ("max_completion_tokens" if openai else "max_tokens")
        )
        if include_usage is None:
            include_usage = config.include_usage is not False
        self.include_usage = include_usage

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body for ``request`` (``request.options`` are merged in last)."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": _messages(request.system, request.messages, self.send_reasoning),
            "stream": True,
        }
        if self.include_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [_tool(spec) for spec in request.tools]
        max_tokens = request.max_tokens or self.config.max_output_tokens
        if max_tokens:
            body[self.max_tokens_field] = max_tokens
        body.update(request.options)
        return body

    def refusal_note(self, status: int, said: str, body: dict[str, Any]) -> str | None:
        """A 4xx naming a field dsh sent that the server refuses: the setting that
        stops it (``dsh.llm._refused_fields``)."""
        return refusal_note(self.name, self._origin, status, said, body, self.include_usage)

    async def chunks(self, request: ModelRequest) -> AsyncGenerator[Chunk, None]:
        key = self.api_key()
        headers = self.key_header(key, KEY_HEADERS["openai"])
        body = self.request_body(request)
        finish: str | None = None
        done = False
        ended = False  # a finish_reason came, and no piece of the answer after it
        slots = CallSlots()  # which tool-call pieces make one call
        refusals: list[str] = []  # the pieces of a refusal (OpenAI's delta.refusal)
        pairs = Pairs()  # an emoji's surrogate pair split between two deltas
        # what ends the answer after its finish_reason: the usage chunk, if asked for
        usage_last = _asks_usage(body)
        async with self.events("/chat/completions", body, headers, key) as events:
            source: AsyncIterator[str] | None = aiter(events)
            while source is not None:
                # after a finish_reason, what follows is waited for FINISH_GRACE at most: a
                # server that never sends [DONE] nor ends the response has finished
                after, source, timed = source, None, ended
                async for data in after:
                    # the marker with white space around it ("data: [DONE] ") is the marker
                    if data == "[DONE]" or (len(data) < _DONE_SPACED and data.strip() == "[DONE]"):
                        done = True
                        await self.drain(events)
                        break
                    try:
                        chunk = loads(data)
                        if chunk.__class__ is not dict:
                            raise TypeError("not a JSON object")
                        error = error_object(chunk)  # {"error": ...}, or one without it
                        if error is not None:
                            raise error_from_body(
                                self.name, error, secret=self.error_secrets(key), server=self.server
                            )
                        for choice in chunk.get("choices") or ():
                            if choice.get("index") not in (0, None):
                                continue  # another of n > 1 choices: only the first is read
                            for piece in _pieces(choice.get("delta"), slots, refusals):
                                ended = False
                                for out in pairs.take(piece):
                                    yield out
                            reason = choice.get("finish_reason")
                            if reason:
                                if not isinstance(reason, str):
                                    raise TypeError("its finish_reason is not text")
                                finish = reason
                                ended = True
                        usage = mapping(self.name, chunk, "usage") or mapping(
                            self.name, mapping(self.name, chunk, "x_groq"), "usage"
                        )
                        if usage:  # Groq's own place for it: x_groq.usage
                            yield UsageChunk(_usage(self.name, usage))
                    except (ValueError, AttributeError, TypeError, KeyError, IndexError) as exc:
                        what, said = events.unreadable("chunk", data)
                        raise malformed(
                            self.name, what, said, exc, self.error_secrets(key), self.server
                        ) from exc
                    if ended:
                        if usage and usage_last and not chunk.get("choices"):
                            await self.drain(events)  # the usage after the finish: the last
                            break
                        if not timed:
                            source = events.within(FINISH_GRACE)
                            break
                    elif timed:  # a piece after the finish (a server that sent one early)
                        source = aiter(events)
                        break
        # a finished answer without [DONE] is whole; one with a piece after its
        # finish_reason (a server that sent one early) was cut off
        if not done and not ended:
            raise ended_early(self.name, "[DONE]", events, self.error_secrets(key), self.server)
        if finish is None and slots and not slots.whole():  # [DONE] mid-call: not whole
            raise ModelError(
                "STREAM_CLOSED",
                f"model {self.name!r}: the stream ended ([DONE]) without a finish_reason, "
                "in the middle of a tool call's arguments",
            )
        # no finish_reason: [DONE] ended a whole answer (some servers never send one)
        stop: StopReason = "stop"
        if finish is not None:  # a word dsh does not know, mid-call: cut
            stop = stop_reason(finish, bool(slots) and not slots.whole())
        detail = finish_detail(finish) if finish and stop == "error" else None
        if refusals:  # the model refused (its finish_reason is "stop"): REFUSED
            stop, detail = "error", "refusal"
        elif stop == "stop" and slots:  # some servers say "stop" after tool calls
            stop = "tool_calls"
        for held in pairs.flush():  # a lone half: nothing came to pair it with
            yield held
        for made in slots.made_ids():  # a call some servers send without an id
            yield made
        yield Finish(stop, detail)


def _pieces(delta: dict[str, Any] | None, slots: CallSlots, refusals: list[str]) -> Iterator[Chunk]:
    """The chunks of one choice's delta: reasoning, text, tool-call pieces. A refusal
    (OpenAI's structured outputs: ``refusal`` text, ``content`` null) is text too, and
    is added to ``refusals`` (looked for only in a delta without text: its content may
    hold reasoning parts)."""
    if not delta:
        return
    reasoning = _reasoning(delta.get("reasoning_content")) or _reasoning(delta.get("reasoning"))
    if reasoning:
        yield ReasoningDelta(reasoning)
    content = _content(delta.get("content"))
    yield from content
    if not any(chunk.__class__ is TextDelta for chunk in content):
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            refusals.append(refusal)
            yield TextDelta(refusal)
    calls = delta.get("tool_calls")
    if calls:
        for position, call in enumerate(calls):
            yield slots.delta(call, position)


def _reasoning(reasoning: Any) -> str:
    """The text of a delta's ``reasoning`` or ``reasoning_content``: a str, or an object's
    ``text`` (``{"text": ...}``, as some servers send it); "" for none. Anything else is
    a ``TypeError`` (the chunk is MALFORMED_RESPONSE): never dropped unseen."""
    if reasoning is None or reasoning.__class__ is str:
        return reasoning or ""
    if isinstance(reasoning, dict) and isinstance(reasoning.get("text"), str):
        return str(reasoning["text"])
    kind = type(reasoning).__name__
    raise TypeError(f"its reasoning is neither text nor an object with text (a {kind})")


def _content(content: Any) -> list[ReasoningDelta | TextDelta]:
    """The chunks of a delta's ``content``: text, or a list of parts (Mistral's reasoning
    models): a ``text`` part's ``text``, a ``thinking`` part's nested ``text`` parts as
    reasoning, a ``reference`` part (citation ids, no text) nothing. Anything else is
    a ``TypeError`` (the chunk is MALFORMED_RESPONSE): never dropped unseen."""
    if content is None or isinstance(content, str):
        return [TextDelta(content)] if content else []
    if not isinstance(content, list):
        raise TypeError("its content is neither text nor a list of parts")
    chunks: list[ReasoningDelta | TextDelta] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "thinking" and isinstance(part.get("thinking"), list):
            for inner in part["thinking"]:
                chunks.extend(ReasoningDelta(t.text) for t in _content([inner]))
        elif kind == "text" and isinstance(part.get("text"), str):
            if part["text"]:
                chunks.append(TextDelta(part["text"]))
        elif kind != "reference":
            raise TypeError(f"a part of its content dsh cannot read ({str(kind)[:40]!r})")
    return chunks


def _usage(model: str, usage: Mapping[str, Any]) -> Usage:
    """The counts of ``usage``; one that is not a count is 0 (``dsh.llm._counts``)."""
    if usage.get("prompt_cache_hit_tokens") is not None:  # DeepSeek
        cached = count(model, usage, "prompt_cache_hit_tokens")
    else:
        details = mapping(model, usage, "prompt_tokens_details")
        cached = count(model, details, "cached_tokens")
    return Usage(
        input_tokens=count(model, usage, "prompt_tokens"),
        output_tokens=count(model, usage, "completion_tokens"),
        cache_read_tokens=cached,
    )


def _tool(spec: ToolSpec) -> dict[str, Any]:
    function: dict[str, Any] = {"name": spec.name, "parameters": spec.parameters}
    if spec.description:
        function["description"] = spec.description
    return {"type": "function", "function": function}


def _messages(
    system: str, messages: Sequence[Message], send_reasoning: bool
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    reasoned = _tool_using(messages) if send_reasoning else set()
    for at, message in enumerate(messages):
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.content})
        elif isinstance(message, ToolResultMessage):
            out.append(
                {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
            )
        elif isinstance(message, AssistantMessage):
            out.append(_assistant(message, at in reasoned))
    return out


def _tool_using(messages: Sequence[Message]) -> set[int]:
    """The places of the assistant messages whose reasoning goes back: DeepSeek's rule
    (thinking mode) is every assistant message between two user messages in which the
    model called a tool, the answer after the calls too (HTTP 400 without it); the
    reasoning of an exchange without tool calls is ignored, so it is not sent. An
    exchange with no reasoning at all (a model that does not think) sends none, so
    servers that know no ``reasoning_content`` never see it."""
    chosen: set[int] = set()
    span: list[int] = []
    called = thought = False
    for at, message in enumerate((*messages, None)):
        if message is None or isinstance(message, UserMessage):
            if called and thought:
                chosen.update(span)
            span, called, thought = [], False, False
        elif isinstance(message, AssistantMessage):
            span.append(at)
            called = called or bool(message.tool_calls)
            thought = thought or any(
                block.type == "reasoning" and block.redacted is None for block in message.content
            )
    return chosen


def _assistant(message: AssistantMessage, send_reasoning: bool) -> dict[str, Any]:
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if block.type == "text":
            text.append(block.text)
        elif block.type == "reasoning":
            if block.redacted is None:  # Anthropic's encrypted reasoning is for Anthropic
                reasoning.append(block.text)
        elif block.type == "tool_call":
            function = {"name": block.name, "arguments": block.arguments}
            calls.append({"id": block.id, "type": "function", "function": function})
        # a ProviderBlock (an Anthropic server tool's, say) is that API's own: left out
    wire: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        wire["tool_calls"] = calls
    elif wire["content"] is None:
        wire["content"] = ""
    if send_reasoning:  # empty when there was none: DeepSeek refuses a missing one
        wire["reasoning_content"] = "".join(reasoning)
    return wire
