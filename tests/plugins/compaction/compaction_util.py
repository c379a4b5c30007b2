"""Shared pieces of the compaction tests: a bulky tool, a request spy, pairing checks,
the small builders of the mutation-found tests (test_compaction_m_*.py), and the
servers and turns of the window and fallback tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import dsh_compaction
from dsh import (
    AssistantMessage,
    Message,
    ModelError,
    ModelRequest,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    hookimpl,
)
from dsh.testing import (
    Reply,
    ScriptedModel,
    check_invariants,
    fail,
    run_turn,
    scripted_harness,
    tool_calls,
)
from dsh_compaction import (
    DEFAULT_PROMPT,
    SUMMARY_HEADER,
    CompactionResult,
    HeuristicCounter,
    RequestEstimator,
    TextTokenCounter,
)
from dsh_compaction._events import previous_summary
from dsh_compaction._plan import plan_compaction

#: what the bulky tool returns: ~300 tokens by the default heuristic
OUTPUT = "0123456789" * 120


class BulkyTool:
    """A ``read`` tool whose output is ``OUTPUT`` tagged with the path it was given."""

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        from dsh.tools import tool

        @tool
        def read(path: str) -> str:
            """Read a file."""
            return f"{path}: {OUTPUT}"

        register(read)


class Dump:
    """A ``dump`` tool whose output is ``size`` characters (about size / 4 tokens)."""

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        from dsh.tools import tool

        @tool
        def dump(size: int) -> str:
            """Dump a file."""
            return "y" * size

        register(dump)


class RequestSpy:
    """Records each request as ``agent_request`` got it, before compaction changed it
    (``tryfirst`` and registered after the compaction plugin: it runs first)."""

    def __init__(self) -> None:
        self.before: list[list[Message]] = []

    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> None:
        self.before.append(list(request.messages))


def reads(count: int, then: str = "done") -> list[Any]:
    """A script: ``count`` steps each reading a file, then a text answer."""
    return [*(tool_calls(("read", {"path": f"f{i}.py"})) for i in range(count)), then]


def summarizer(*script: Any) -> ScriptedModel:
    """The summariser model (a large window: one call per compaction)."""
    return ScriptedModel(list(script), name="summarizer", context_window=1_000_000)


def summary_of(text: str) -> UserMessage:
    return UserMessage(content=SUMMARY_HEADER + text)


class CharCounter(TextTokenCounter):
    """One token per character of text; framing and tool definitions are free. Makes
    the tests' arithmetic exact, whatever tools the core registers."""

    def __init__(self) -> None:
        super().__init__(len, message_overhead=0, call_overhead=0)

    def count_tools(self, tools: Sequence[ToolSpec]) -> int:
        return 0


class CountChars:
    @hookimpl(optionalhook=True)
    def compaction_token_counter(self) -> CharCounter:
        return CharCounter()


@asynccontextmanager
async def harness(
    *models: ScriptedModel,
    extra: Sequence[object | tuple[str, object]] = (),
    chars: bool = True,
    **kwargs: Any,
) -> Any:
    """A harness with the scripted models, the compaction plugin, the bulky tool,
    (``chars``) the ``CharCounter`` and ``extra`` plugins (registered in that order),
    no entry points. Without a model named ``summarizer``, one with no replies: the
    ``options()`` of the tests name it, and an agent's options given in code may name
    only registered models (a test whose summariser is never called gives none)."""
    if not any(m.info.name == "summarizer" for m in models):
        models = (*models, summarizer())
    plugins = [("compaction", dsh_compaction), ("bulky", BulkyTool())]
    if chars:
        plugins.append(("chars", CountChars()))
    plugins += extra
    async with scripted_harness(
        *models, plugins=plugins, load_entry_points=False, **kwargs
    ) as started:
        yield started


def pairing_problems(messages: Sequence[Message]) -> list[str]:
    """What a provider would refuse: a tool result whose call is not waiting for it, a
    call never answered, a history that starts with a tool result."""
    problems: list[str] = []
    waiting: dict[str, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                waiting[call.id] = waiting.get(call.id, 0) + 1
        elif isinstance(message, ToolResultMessage):
            if waiting.get(message.call_id, 0) <= 0:
                problems.append(f"#{index}: result for {message.call_id!r} without its call")
            else:
                waiting[message.call_id] -= 1
    problems += [f"call {c!r} has no result" for c, n in waiting.items() if n > 0]
    return problems


def events_of(events: Sequence[Any], prefix: str = "compact/") -> list[Any]:
    return [e for e in events if e.type.startswith(prefix)]


# -- builders of the mutation-found tests -----------------------------------------------

CHARS = CharCounter()
WINDOW = 7000  # CharCounter: a read step adds 1232 tokens; step 6 of reads(5) passes 0.8
OVERFLOW = fail("CONTEXT_WINDOW_EXCEEDED", "prompt is too long")


def options(**compaction: Any) -> dict[str, Any]:
    settings = {"model": "summarizer", "prune_chars": 0, **compaction}
    return {"model": "scripted", "compaction": settings}


def call(call_id: str) -> AssistantMessage:
    tool_call = ToolCall(id=call_id, name="read", arguments="{}")
    return AssistantMessage(content=(tool_call,), stop_reason="tool_calls")


def result(call_id: str, content: str = "r") -> ToolResultMessage:
    return ToolResultMessage(call_id=call_id, name="read", content=content)


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(content=(TextBlock(text=text),))


def opening(messages: Sequence[Message]) -> str | None:
    """The summary a history built by hand opens with (by ``summary_of``): in a
    session, the log says which message is the summary (``opening_summary``)."""
    return previous_summary(messages[0]) if messages else None


def plan(messages: Sequence[Message], budget: int, keep: Sequence[int] = (), prune: int = 0) -> Any:
    counts = [CHARS.count_message(m) for m in messages]
    return plan_compaction(
        messages,
        counts,
        tail_budget=budget,
        keep=keep,
        prune_chars=prune,
        counter=CHARS,
        summary=opening(messages),
    )


def prompt_tokens(request: ModelRequest) -> int:
    """The request's prompt as the plugin's default heuristic counts it."""
    return RequestEstimator(HeuristicCounter()).request(request)


class WindowServer:
    """One model answering the agent's steps from ``steps`` and the summariser's
    requests with ``summary(n)`` (n = 1, 2, ...); a request whose prompt plus the output
    it reserves is over ``window`` is refused with CONTEXT_WINDOW_EXCEEDED, as
    OpenAI-compatible servers (vLLM, OpenAI) do."""

    def __init__(
        self,
        window: int,
        steps: list[Any],
        summary: Callable[[int], str] = lambda n: f"summary {n}",
        max_output: int | None = None,
    ) -> None:
        self.window = window
        self.steps = list(steps)
        self.summary = summary
        self.sent: list[ModelRequest] = []  # the agent's steps the server answered
        self.summarising: list[ModelRequest] = []  # the summariser's, answered
        self.refused: list[ModelRequest] = []
        self.model = ScriptedModel(
            [self.answer] * 500, context_window=window, max_output_tokens=max_output
        )

    def answer(self, request: ModelRequest) -> Any:
        # what a provider sends: the request's max_tokens, else the model's output limit
        needed = prompt_tokens(request) + (request.max_tokens or self.model.max_output_tokens or 0)
        if needed > self.window:
            self.refused.append(request)
            return fail(
                "CONTEXT_WINDOW_EXCEEDED",
                f"maximum context length is {self.window} tokens; you requested {needed}",
            )
        if request.system == DEFAULT_PROMPT:
            self.summarising.append(request)
            return self.summary(len(self.summarising))
        self.sent.append(request)
        return self.steps.pop(0)


def chars(request: ModelRequest) -> int:
    """The request's tokens as the tests' ``CharCounter`` counts them, every message once."""
    return RequestEstimator(CharCounter()).request(request)


# -- servers that state their window, and the turns of the window tests ----------------

REAL = 5000  # a stating server's window: CharCounter tokens (one a character)
CONFIGURED = 1_000_000  # what its model's info says


class RealWindow:
    """The agent's model: answers from ``steps``, and refuses a request over ``REAL``
    tokens (its ``CharCounter`` estimate times ``factor``: the server's count) stating
    the window and its count, as llama.cpp does (``stated=False``: its words only, no
    numbers read)."""

    def __init__(self, steps: list[Any], *, factor: float = 1.0, stated: bool = True) -> None:
        self.steps = list(steps)
        self.factor = factor
        self.stated = stated
        self.sizes: list[int] = []  # each request's, as the server counts it
        self.refused: list[ModelRequest] = []
        self.model = ScriptedModel([self.answer] * 100, context_window=CONFIGURED)

    def answer(self, request: ModelRequest) -> Any:
        size = round(chars(request) * self.factor)
        self.sizes.append(size)
        if size <= REAL:
            return self.steps.pop(0)
        self.refused.append(request)
        said = f"request ({size} tokens) exceeds the available context size ({REAL} tokens)"
        sizes = {"context_window": REAL, "request_tokens": size} if self.stated else {}
        return Reply(error=ModelError("CONTEXT_WINDOW_EXCEEDED", said, **sizes))


class StatingSummariser:
    """A summariser of ``window`` tokens that refuses a request over ``refuse_over``
    tokens (default: its window), prompt and reserved answer counted by the plugin's
    default heuristic; its error states the window ``states``
    (``ModelError.context_window``), as llama.cpp's does."""

    def __init__(
        self, window: int | None, refuse_over: int | None = None, *, states: int | None = None
    ) -> None:
        self.needed: list[int] = []
        self.requests: list[ModelRequest] = []
        self.refuse_over = refuse_over or window or 0
        self.states = states
        self.model = ScriptedModel([self.answer] * 200, name="summarizer", context_window=window)

    def answer(self, request: ModelRequest) -> Any:
        needed = prompt_tokens(request) + (request.max_tokens or 0)
        self.needed.append(needed)
        self.requests.append(request)
        if needed > self.refuse_over:
            said = f"you requested {needed} tokens"
            if self.states is not None:
                stated = {"context_window": self.states, "request_tokens": needed}
                return Reply(error=ModelError("CONTEXT_WINDOW_EXCEEDED", said, **stated))
            return fail("CONTEXT_WINDOW_EXCEEDED", said)
        return f"summary {len(self.needed)}"


#: the options of an agent compacted by hand only
BY_HAND = {"model": "scripted", "compaction": {"model": "summarizer", "enabled": False}}


async def by_hand(agent: Any, *prompts: str) -> CompactionResult:
    """One turn of ``agent`` per prompt, then ``compact_now``."""
    for prompt in prompts:
        await run_turn(agent, prompt)
    result: CompactionResult = await dsh_compaction.compact_now(agent)
    return result


async def compacted_by_hand(
    summariser: ScriptedModel, *prompts: str
) -> tuple[CompactionResult, list[Any]]:
    """One turn per prompt (a model of 100,000 tokens answering "ok"), then
    ``compact_now`` with ``summariser`` (the default heuristic counts tokens); returns
    its result and the agent's events."""
    model = ScriptedModel(["ok"] * len(prompts), context_window=100_000)
    async with harness(model, summariser, chars=False) as h:
        agent = await h.agents.create("a", options=BY_HAND)
        result = await by_hand(agent, *prompts)
        return result, list(agent.session.events)


# -- a refused summary's fallback -------------------------------------------------------

PREVIOUS = "\n".join(["## Goal\nThe fact is 42; keep it."] * 10)  # 329 characters


async def second_turn(
    script: list[Any], *answers: Any, extra: Sequence[Any] = ()
) -> tuple[list[Any], list[Any]]:
    """Turn 1 compacts to PREVIOUS; turn 2 runs ``script``, the summariser answering
    ``answers``. Returns turn 2's events and the history."""
    model = ScriptedModel([*reads(5), *script], context_window=WINDOW)
    summariser = summarizer(PREVIOUS, *answers)
    async with harness(model, summariser, extra=extra) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "task one")
        events = await run_turn(agent, "Reply with just 'noted' and the fact.")
        assert check_invariants(agent.session.events) == []
        history = list(agent.session.history)
    summariser.assert_complete()
    return events, history
