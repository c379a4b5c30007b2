"""A scripted model: replies from a list, records every request."""

from __future__ import annotations

import json
import reprlib
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


def _parts(maker: str, parts: tuple[object, ...]) -> None:
    """TypeError for a part that is no str, as the answer is made (not a turn's
    ``MALFORMED_RESPONSE`` error naming no script entry)."""
    for number, part in enumerate(parts, 1):
        if not isinstance(part, str):
            raise TypeError(
                f"{maker}'s parts are str, streamed one chunk each; got "
                f"{type(part).__name__} ({reprlib.repr(part)}) as part #{number}: "
                f'write {maker}("...")'
            )


def text(*parts: str, usage: Usage | None = None) -> Reply:
    """A plain answer; each part is streamed as its own chunk. The step reports
    ``usage`` (default: 10 input tokens, one output token per part)."""
    _parts("text", parts)
    return Reply((*(TextDelta(p) for p in parts), _usage(len(parts), usage), Finish("stop")))


def tool_calls(
    *calls: tuple[str, dict[str, Any] | str], say: str = "", usage: Usage | None = None
) -> Reply:
    """An answer calling tools: ``(name, arguments)`` pairs; a str argument is sent raw
    (to script invalid JSON). Call ids are ``call-<n>`` unless given as ``name#id``.
    The step reports ``usage`` (default: 10 input tokens, 1 output token)."""
    for call in calls:
        if not (isinstance(call, tuple) and len(call) == 2 and isinstance(call[0], str)):
            raise TypeError(
                f"tool_calls takes (name, arguments) pairs, one per call; got "
                f'{reprlib.repr(call)}: write tool_calls(("ls", {{"path": "."}}))'
            )
        if not isinstance(call[1], (dict, str)):
            raise TypeError(
                f"tool_calls: the arguments of {call[0]!r} are a dict (sent as JSON) or a "
                f"str (sent raw), not {type(call[1]).__name__} ({reprlib.repr(call[1])})"
            )
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
    _parts("max_tokens", (partial,))
    reply = tool_calls(*calls, say=partial, usage=usage) if calls else text(partial, usage=usage)
    return Reply((*reply.chunks[:-1], Finish("max_tokens")))


def fail(code: str = "SERVER", message: str = "scripted failure") -> Reply:
    """The model call fails with ``ModelError(code, message)``."""
    return Reply(error=ModelError(code, message))


def hang(*parts: str) -> Reply:
    """Stream ``parts``, then wait until the step is aborted."""
    _parts("hang", parts)
    return Reply(tuple(TextDelta(p) for p in parts), hang=True)


Entry = Reply | str | Callable[[ModelRequest], "Reply | str"]
#: The answers' makers: given uncalled, each would be taken for a function of the request.
_HELPERS: tuple[Callable[..., Reply], ...] = (text, tool_calls, max_tokens, fail, hang)


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def _refused(entries: Sequence[object], first: int) -> None:
    """TypeError for the first of ``entries`` that is no answer (numbered from ``first``):
    refused as the model is made, not as ``'int' object has no attribute 'error'`` at
    the request."""
    for number, entry in enumerate(entries, first):
        if any(entry is helper for helper in _HELPERS):  # no answer: its maker
            name = getattr(entry, "__name__", "")
            raise TypeError(
                f"ScriptedModel's script entry #{number} is the function {name} itself: "
                f"call it for an answer ({name}(...))"
            )
        if not isinstance(entry, (Reply, str)) and not callable(entry):
            raise TypeError(
                f"ScriptedModel's script entry #{number} is {type(entry).__name__} "
                f"({reprlib.repr(entry)}): an entry is a Reply, a str, or a function of "
                "the request returning a Reply or a str"
            )


@dataclass
class ScriptedModel:
    """A model that answers from ``script`` in order. Entries are ``Reply`` values (see
    ``text``, ``tool_calls``, ``max_tokens``, ``fail``, ``hang``), plain strings (a text
    answer) or functions of the request returning either.

    ``requests`` records every request received; running past the end fails the step
    with a clear error. ``assert_complete()`` fails while script entries are left, when
    the model was asked past the end, and when a function entry raised (or returned no
    answer): its exception fails the step as a model error, and ``assert_complete()``
    raises the first such one again (chained), so a check in a function entry can fail
    a test.
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
    _past: int = field(default=0, init=False, repr=False)  # requests past the script's end
    #: what each function entry that failed raised: (entry number, its name, exception)
    _raised: list[tuple[int, str, Exception]] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        """A str is a Sequence too (``"hello"`` would answer ``h``, then ``e``...), and a
        single entry is no script: refused here, not at the first request."""
        if isinstance(self.script, (str, bytes)) or not isinstance(self.script, Sequence):
            given = "a function" if callable(self.script) else f"a {type(self.script).__name__}"
            raise TypeError(
                "ScriptedModel's script is a list of answers (Reply, str, or a function of "
                f"the request), not {given}: for one answer, pass [it]"
            )
        _refused(self.script, 1)

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
        _refused(entries, len(self.script) + 1)
        self.script = [*self.script, *entries]

    def assert_complete(self) -> None:
        """Fail (AssertionError) when a function entry raised (the first, chained), the
        model was asked past the end of the script, or entries are left."""
        said = f"scripted model {self.name!r}:"
        if self._raised:
            number, name, exc = self._raised[0]
            if isinstance(exc, _NoAnswer):
                raise AssertionError(str(exc)) from exc
            raise AssertionError(
                f"{said} script entry #{number} ({name}) raised {type(exc).__name__}: {exc}"
            ) from exc
        if self._past:
            asked = self._next + self._past  # self._next: the script's length then
            raise AssertionError(f"{said} {asked} requests for a script of {_entries(self._next)}")
        left = len(self.script) - self._next
        if left:
            were = "entry was" if left == 1 else "entries were"
            raise AssertionError(f"{said} {left} script {were} not used")

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        if self._next >= len(self.script):
            self._past += 1
            raise ModelError(
                "SCRIPT_EXHAUSTED",
                f"scripted model {self.name!r} has no reply left for request "
                f"#{self._next + self._past} (script has {_entries(len(self.script))})",
            )
        entry = self.script[self._next]
        self._next += 1
        if callable(entry) and not isinstance(entry, Reply):
            entry = self._called(entry, request)
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

    def _called(
        self, entry: Callable[[ModelRequest], Reply | str], request: ModelRequest
    ) -> Reply | str:
        """What function entry ``entry`` answers; what it raises (or an answer of another
        type) is kept for ``assert_complete`` and fails the step."""
        name = getattr(entry, "__name__", type(entry).__name__)
        try:
            answer = entry(request)
            if not isinstance(answer, (Reply, str)):
                raise _NoAnswer(
                    f"scripted model {self.name!r}: script entry #{self._next} ({name}) "
                    f"returned {type(answer).__name__}; return a Reply or a str"
                )
        except Exception as exc:
            self._raised.append((self._next, name, exc))
            raise
        return answer


class _NoAnswer(TypeError):
    """A function entry returned something that is no answer."""
