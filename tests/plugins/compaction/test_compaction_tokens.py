"""Token estimates: the default heuristic, the incremental request estimate, and what a
compaction counts."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from compaction_util import (
    WINDOW,
    Dump,
    WindowServer,
    events_of,
    harness,
    options,
    reads,
    summarizer,
)

from dsh import (
    AssistantMessage,
    Message,
    ModelRequest,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    hookimpl,
)
from dsh.session import CORE_REDUCERS, Session, SessionEvent
from dsh.testing import ScriptedModel, run_turn, tool_calls
from dsh_compaction import HeuristicCounter, RequestEstimator, TextTokenCounter

pytestmark = pytest.mark.plugins("compaction")


def test_the_heuristic_counts_characters_and_utf8_bytes() -> None:
    counter = HeuristicCounter()

    assert counter.count_text("") == 0
    assert counter.count_text("abcd" * 10) == 10
    assert counter.count_text("abcde") == 2  # rounded up
    assert counter.count_text("é" * 4) == 2  # 8 bytes: non-ASCII is not undercounted
    assert HeuristicCounter(2.0).count_text("abcd") == 2


def test_a_message_counts_all_its_parts_plus_overhead() -> None:
    counter = TextTokenCounter(len, message_overhead=3, call_overhead=5)
    message = AssistantMessage(
        content=(
            TextBlock(text="hello"),
            ReasoningBlock(text="hmm"),
            ToolCall(id="c", name="read", arguments='{"a":1}'),
        )
    )

    assert counter.count_message(UserMessage(content="four")) == 3 + 4
    assert counter.count_message(message) == 3 + 5 + 3 + (5 + 4 + 7)
    result = ToolResultMessage(call_id="c", name="read", content="out")
    assert counter.count_message(result) == 3 + 3 + 4
    spec = ToolSpec(name="read", description="Read.", parameters={"type": "object"})
    assert counter.count_tools([spec]) == 5 + 4 + 5 + len('{"type":"object"}')
    # counted as the request sends it: non-ASCII as is, not as \uXXXX escapes
    spec = ToolSpec(name="read", description="Read.", parameters={"title": "Lesen über"})
    assert counter.count_tools([spec]) == 5 + 4 + 5 + len('{"title":"Lesen über"}')


class Counting(TextTokenCounter):
    def __init__(self) -> None:
        super().__init__(len, message_overhead=0)
        self.messages = 0
        self.texts = 0

    def count_message(self, message: Message) -> int:
        self.messages += 1
        return super().count_message(message)

    def count_text(self, text: str) -> int:
        self.texts += 1
        return super().count_text(text)


def test_the_estimate_counts_only_messages_added_since_the_last_one() -> None:
    session = Session("s")
    counter = Counting()
    estimator = RequestEstimator(counter)
    tools = (ToolSpec(name="t"),)
    totals = []
    for index in range(100):
        session._append("user/message", {"content": f"message {index:03}"})
        request = ModelRequest.model_construct(  # as the loop builds it
            system="sys", tools=tools, messages=session.history
        )
        totals.append(estimator.request(request))

    assert counter.messages == 100  # each message once, not 1 + 2 + ... + 100
    assert counter.texts == 1  # the system prompt once (tools by identity)
    assert totals[-1] == estimator.fixed("sys", tools) + 100 * len("message 000")
    assert totals == sorted(totals)
    assert estimator.request(request) == totals[-1]
    assert counter.messages == 100


def test_a_replaced_or_shorter_history_is_counted_again() -> None:
    counter = Counting()
    estimator = RequestEstimator(counter)
    messages: list[Message] = [UserMessage(content=f"m{i}") for i in range(10)]
    assert estimator.messages(messages) == 20

    replaced: list[Message] = [UserMessage(content="summary!"), *messages[8:]]
    assert estimator.messages(replaced) == 8 + 4
    assert estimator.messages(messages[:3]) == 6  # a trimmed request
    assert counter.messages == 10 + 3 + 3


def test_a_changed_system_prompt_is_counted_again() -> None:
    counter = Counting()
    estimator = RequestEstimator(counter)

    assert estimator.fixed("abc", ()) == 3
    assert estimator.fixed("abc", ()) == 3
    assert estimator.fixed("abcdef", ()) == 6
    assert counter.texts == 2


def test_an_edit_in_the_middle_of_the_session_history_is_counted_again() -> None:
    """Another plugin's reducer replaces one message in the middle (its ends stay the
    same objects): the estimate follows, as a full recount would."""

    def shorten(history: list[Message], event: SessionEvent) -> list[Message]:
        index = event.data["index"]
        return [*history[:index], UserMessage(content="x"), *history[index + 1 :]]

    session = Session("s", reducers={**CORE_REDUCERS, "test/shorten": shorten})
    for index in range(5):
        session._append("user/message", {"content": f"message {index} " + "y" * 100})
    counter = Counting()
    estimator = RequestEstimator(counter)
    before = estimator.messages(session.history)

    session.append("test/shorten", {"index": 2})
    after = estimator.messages(session.history)

    assert after == RequestEstimator(Counting()).messages(session.history)
    assert after < before
    session._append("user/message", {"content": "more"})
    assert estimator.messages(session.history) == after + 4
    assert counter.messages == 5 + 5 + 1  # recounted once, then only the new message


# --- what a compaction counts -------------------------------------------------------------


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each history whose per-message counts the estimator is asked for."""
    asked: list[int] = []
    original = RequestEstimator.counts

    def counts(self: RequestEstimator, messages: Sequence[Message]) -> list[int]:
        asked.append(len(messages))
        return original(self, messages)

    monkeypatch.setattr(RequestEstimator, "counts", counts)
    return asked


async def test_a_compaction_measures_the_history_once(passes: list[int]) -> None:
    # the sixth request (the task and five reads) passes 0.8 of the window
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    assert [e.data["outcome"] for e in events_of(events, "compact/end")] == ["summarized"]
    assert passes == [11]


async def test_the_compaction_after_a_stub_measures_the_stubbed_history_once(
    passes: list[int],
) -> None:
    # three turns of 1150 tokens and a 20,000-character result: the stub leaves the
    # request over the limit, and the rest is summarised
    server = WindowServer(6000, ["ok"] * 3 + [tool_calls(("dump", {"size": 20_000})), "done"])
    agent_options = {"model": "scripted", "max_tokens": 1500}
    async with harness(server.model, extra=[("dump", Dump())], chars=False) as h:
        agent = await h.agents.create("a", options=agent_options)
        for i in range(3):
            await run_turn(agent, str(i) * 4600)
        events = await run_turn(agent, "dump it")

    ends = [e.data["outcome"] for e in events_of(events, "compact/end")]
    assert ends == ["pruned", "summarized"]
    assert passes == [9, 9]  # the history, then the stubbed one, each once


async def test_the_counter_is_asked_once_per_agent_and_model_when_the_agent_switches_back() -> None:
    # docs/compaction.md, compaction_token_counter: "Asked once per agent and model"
    class Models:
        def __init__(self) -> None:
            self.asked: list[str | None] = []

        @hookimpl(optionalhook=True)
        def compaction_token_counter(self, model: str | None) -> Counting:
            self.asked.append(model)
            return Counting()

    models = Models()
    first = ScriptedModel(["one", "three"], context_window=WINDOW)
    other = ScriptedModel(["two"], name="other", context_window=WINDOW)
    async with harness(first, other, extra=[("m", models)], chars=False) as h:
        agent = await h.agents.create("a", options=options())
        for model in ("scripted", "other", "scripted"):
            agent.agent.options["model"] = model
            events = await run_turn(agent, "hello")
            assert events[-1].data["reason"] == "completed"

    assert models.asked == ["scripted", "other"]


class _Count(int):
    """An int subclass a tokenizer binding might return."""


@pytest.mark.parametrize(
    ("tokens", "counted"),
    [(0, 0), (7, 7), (_Count(7), 7), (True, TypeError), (-1, ValueError), (2.0, TypeError)],
)
def test_a_count_is_an_int_at_least_zero_not_a_bool(tokens: object, counted: object) -> None:
    from dsh_compaction._tokens import count_of

    if isinstance(counted, type):
        with pytest.raises(counted, match="not a count of tokens"):
            count_of(tokens)
    else:
        got = count_of(tokens)
        assert got == counted and type(got) is int
