"""A scripted model: replies from a list, records every request."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from dsh._config_models import DEFAULT_MAX_WAIT
from dsh.errors import ModelError
from dsh.llm.base import Chunk, Finish, ModelInfo, TextDelta, ToolCallDelta, UsageChunk
from dsh.messages import ModelRequest, Usage

__all__ = ["Reply", "ScriptedModel", "fail", "hang", "max_tokens", "text", "tool_calls"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer: its chunks, or an error to raise, or a hang."""

    chunks: tuple[Chunk, ...] = ()
    error: ModelError | None = None
    hang: bool = False


def _usage(output: int = 1, usage: Usage | None = None) -> UsageChunk:
    return UsageChunk(usage if usage is not None else Usage(input_tokens=10, output_tokens=output))


def text(*parts: str, usage: Usage | None = None) -> Reply:
    """A plain answer; each part is streamed as its own chunk. The step reports
    ``usage`` (default: 10 input tokens, one output token per part)."""
    return Reply((*(TextDelta(p) for p in parts), _usage(len(parts), usage), Finish("stop")))


def tool_calls(
    *calls: tuple[str, dict[str, Any] | str], say: str = "", usage: Usage | None = None
) -> Reply:
    """An answer calling tools: ``(name, arguments)`` pairs; a str argument is sent raw
    (to script invalid JSON). Call ids are ``call-<n>`` unless given as ``name#id``.
    The step reports ``usage`` (default: 10 input tokens, 1 output token)."""
    chunks: list[Chunk] = [TextDelta(say)] if say else []
    for index, (name, arguments) in enumerate(calls):
        tool, _, call_id = name.partition("#")
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        chunks.append(ToolCallDelta(index, id=call_id or f"call-{index}", name=tool))
        chunks.append(ToolCallDelta(index, arguments=raw))
    return Reply((*chunks, _usage(1, usage), Finish("tool_calls")))


def max_tokens(
    partial: str, *calls: tuple[str, dict[str, Any]], usage: Usage | None = None
) -> Reply:
    """An answer cut off by the output limit, optionally with (incomplete) tool calls."""
    reply = tool_calls(*calls, say=partial, usage=usage) if calls else text(partial, usage=usage)
    return Reply((*reply.chunks[:-1], Finish("max_tokens")))


def fail(code: str = "SERVER", message: str = "scripted failure") -> Reply:
    """The model call fails with ``ModelError(code, message)``."""
    return Reply(error=ModelError(code, message))


def hang(*parts: str) -> Reply:
    """Stream ``parts``, then wait until the step is aborted."""
    return Reply(tuple(TextDelta(p) for p in parts), hang=True)


Entry = Reply | str | Callable[[ModelRequest], "Reply | str"]


@dataclass
class ScriptedModel:
    """A model that answers from ``script`` in order. Entries are ``Reply`` values (see
    ``text``, ``tool_calls``, ``max_tokens``, ``fail``, ``hang``), plain strings (a text
    answer) or functions of the request returning either.

    ``requests`` records every request received; ``assert_complete()`` fails while
    script entries are left; running past the end fails the step with a clear error.
    """

    script: Sequence[Entry] = ()
    name: str = "scripted"
    context_window: int | None = 8192
    #: the output a provider would reserve for a request that sets no ``max_tokens``
    max_output_tokens: int | None = None
    #: the longest ``retry_after`` the loop waits for before retrying a failed call
    max_wait: float = DEFAULT_MAX_WAIT
    requests: list[ModelRequest] = field(default_factory=list)
    aborted: int = 0  # how many streams were closed before they finished
    _next: int = 0

    def __post_init__(self) -> None:
        """A str is a Sequence too (``"hello"`` would answer ``h``, then ``e``...), and a
        single entry is no script: refused here, not at the first request."""
        if isinstance(self.script, (str, bytes)) or not isinstance(self.script, Sequence):
            given = "a function" if callable(self.script) else f"a {type(self.script).__name__}"
            raise TypeError(
                "ScriptedModel's script is a list of answers (Reply, str, or a function of "
                f"the request), not {given}: for one answer, pass [it]"
            )

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(
            self.name,
            "scripted",
            context_window=self.context_window,
            max_output_tokens=self.max_output_tokens,
            max_wait=self.max_wait,
        )

    def extend(self, *entries: Entry) -> None:
        self.script = [*self.script, *entries]

    def assert_complete(self) -> None:
        left = len(self.script) - self._next
        assert left == 0, f"scripted model {self.name!r}: {left} script entries were not used"

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        if self._next >= len(self.script):
            raise ModelError(
                "SCRIPT_EXHAUSTED",
                f"scripted model {self.name!r} has no reply left for request "
                f"#{len(self.requests)} (script has {len(self.script)} entries)",
            )
        entry = self.script[self._next]
        self._next += 1
        if callable(entry) and not isinstance(entry, Reply):
            entry = entry(request)
        reply = text(entry) if isinstance(entry, str) else entry
        if reply.error is not None:
            raise reply.error
        try:
            for chunk in reply.chunks:
                yield chunk
            if reply.hang:
                await anyio.sleep_forever()
        except (GeneratorExit, anyio.get_cancelled_exc_class()):
            self.aborted += 1
            raise
