"""Found by mutation testing: when pruning is enough, the tail budget, the latest
user message, failures and what they report, the estimate's counter and settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import (
    CHARS,
    WINDOW,
    events_of,
    harness,
    options,
    reads,
    summarizer,
)

from dsh import (
    Message,
    ToolResultMessage,
    hookimpl,
)
from dsh.testing import ScriptedModel, check_invariants, run_turn
from dsh_compaction import (
    SUMMARY_HEADER,
    compact_now,
)
from dsh_compaction._state import state_for

pytestmark = pytest.mark.plugins("compaction")


# --- when pruning is enough, and how large the tail is ------------------------------------


@pytest.mark.parametrize(
    ("tail_tokens", "task", "outcome"),
    [
        (3700, 256, "pruned"),  # prunes two reads: exactly a quarter of the room left
        (3700, 257, "summarized"),  # one token short of it
        (5000, 4, "summarized"),  # prunes one read: under the threshold, not enough
    ],
)
async def test_pruning_is_the_compaction_only_when_it_frees_a_quarter_of_the_room(
    tail_tokens: int, task: int, outcome: str
) -> None:
    model = ScriptedModel(reads(5), context_window=WINDOW)
    settings = {"prune_chars": 500, "tail_tokens": tail_tokens}
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options(**settings))
        events = await run_turn(agent, "t" * task)

    end = events_of(events, "compact/end")[0]
    assert end.data["outcome"] == outcome
    if outcome == "pruned":
        # threshold 5600, room 5600: pruning must reach 5600 - 5600 / 4
        assert end.data["tokens_after"] == 4200
        (prune,) = events_of(events, "compact/prune")
        saved = end.data["tokens_before"] - end.data["tokens_after"]
        assert prune.data["tokens_saved"] == saved
        assert [p["index"] for p in prune.data["pruned"]] == [2, 4]  # the tail keeps 3 reads


async def test_the_tail_is_at_most_half_the_room_below_the_threshold() -> None:
    # a manual compaction of 7000 tokens: 3000 of system prompt, 40 messages of 100;
    # threshold 5600 leaves 2600 of room, so the tail is 1300 tokens (not 0.3 * 7000)
    model = ScriptedModel(["a" * 100] * 20, context_window=1_000_000)
    agent_options = {**options(), "system_prompt": "s" * 3000}
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=agent_options)
        for _ in range(20):
            await run_turn(agent, "u" * 100)
        await compact_now(agent)
        events = list(agent.session.events)

    start, summary, _ = events_of(events)
    assert (start.data["tokens"], start.data["context_window"]) == (7000, 7000)
    assert summary.data["replaces"] == 40 - 13  # a tail of exactly 1300 tokens


async def test_a_manual_compaction_measures_against_a_known_window_smaller_than_the_history() -> (
    None
):
    model = ScriptedModel(reads(3), context_window=2000)
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options(enabled=False))
        await run_turn(agent, "task")
        result = await compact_now(agent)
        events = list(agent.session.events)

    start = events_of(events, "compact/start")[0]
    assert start.data["tokens"] > 2000
    assert start.data["context_window"] == 2000
    assert result.outcome == "summarized"


async def test_a_manual_compaction_summarises_even_when_pruning_would_do() -> None:
    model = ScriptedModel(reads(3), context_window=1_000_000)
    async with harness(model, summarizer("by hand")) as h:
        agent = await h.agents.create("a", options=options(prune_chars=500))
        await run_turn(agent, "task")
        result = await compact_now(agent)
        events = events_of(list(agent.session.events))

    assert result.outcome == "summarized"
    assert [e.type for e in events] == ["compact/start", "compact/summary", "compact/end"]


# --- the latest user message --------------------------------------------------------------


@pytest.mark.parametrize(("size", "kept"), [(2100, [0]), (2101, [])])
async def test_the_latest_user_message_is_kept_only_if_it_fits_the_tail_budget(
    size: int, kept: list[int]
) -> None:
    # tail budget: 0.3 * 7000 = 2100 tokens; the fourth request (2100 + 3 reads) passes
    model = ScriptedModel(reads(3), context_window=WINDOW)
    summariser = summarizer("s")
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "t" * size)

    summary = events_of(events, "compact/summary")[0]
    assert summary.data["kept"] == kept
    assert ("t" * 100 in summariser.requests[0].messages[0].content) is not bool(kept)


# --- failures, and what they report -------------------------------------------------------


async def test_compact_now_reports_the_error_of_a_skipped_compaction() -> None:
    model = ScriptedModel(["hi"], context_window=1_000_000)
    async with harness(model, summarizer()) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "hello")
        result = await compact_now(agent)
        end = events_of(list(agent.session.events), "compact/end")[0]

    assert result.error == {"code": "NOTHING", "message": "nothing to compact"}
    assert (end.data["reason"], end.data["error"]) == ("manual", result.error)


class Keep:
    """A ``compaction_keep`` impl that raises, or returns ``value``."""

    def __init__(self, value: Any) -> None:
        self.value = value

    @hookimpl(optionalhook=True)
    def compaction_keep(self) -> Any:
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (RuntimeError("no marks today"), "RuntimeError: no marks today"),
        ("0, 1", "TypeError: returned '0, 1', not a collection of indices"),
        ([0, "1"], "TypeError: returned [0, '1'], not a collection of indices"),
    ],
)
async def test_a_failing_compaction_keep_impl_is_a_logged_failure_naming_it(
    value: Any, message: str
) -> None:
    """A raising impl, or one returning something other than a collection of indices:
    the failure names its plugin and impl (a chain's result has no single author, so
    each impl's result is checked as it returns it)."""
    model = ScriptedModel(reads(5), context_window=WINDOW)
    summariser = summarizer("s")
    async with harness(model, summariser, extra=[("keeper", Keep(value))]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []

    start, end = events_of(events)
    assert (start.type, start.data["step"]) == ("compact/start", 6)
    error = end.data["error"]
    assert (end.data["outcome"], error["code"], error["plugin"]) == ("failed", "HOOK", "keeper")
    assert error["message"] == (
        "plugin 'keeper' failed in hook compaction_keep (impl Keep.compaction_keep()): " + message
    )
    assert summariser.requests == []
    assert events[-1].data["reason"] == "completed"


async def test_a_wrong_compaction_keep_result_is_its_own_impls_failure_not_the_next_ones() -> None:
    """``wrong`` returns a text; the impl after it adds to what it is given, and a text
    makes it raise: the failure is ``wrong``'s, before ``adding`` runs."""

    class Adding:
        calls = 0

        @hookimpl(optionalhook=True)
        def compaction_keep(self, keep: Any) -> Any:
            self.calls += 1
            return keep | {0}

    adding = Adding()
    model = ScriptedModel(reads(5), context_window=WINDOW)
    # the later registered runs first
    extra = [("adding", adding), ("wrong", Keep("0, 1"))]
    async with harness(model, summarizer("s"), extra=extra) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    (end,) = events_of(events, "compact/end")
    assert (end.data["error"]["plugin"], adding.calls) == ("wrong", 0)
    assert "not a collection of indices" in end.data["error"]["message"]


async def test_a_plain_compaction_keep_impl_returning_a_coroutine_is_named() -> None:
    """As dsh's dispatcher says it for any hook (the check never sees the coroutine)."""

    class Plain:
        @hookimpl(optionalhook=True)
        def compaction_keep(self, keep: Any) -> Any:
            async def later() -> Any:
                return keep

            return later()

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer("s"), extra=[("plain", Plain())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    (end,) = events_of(events, "compact/end")
    assert end.data["error"]["plugin"] == "plain"
    assert end.data["error"]["message"].endswith(
        "TypeError: returned coroutine from a plain def; make the impl async def so that "
        "it is awaited"
    )


async def test_nothing_to_compact_at_the_threshold_logs_nothing_and_a_later_step_compacts() -> None:
    # the task alone passes the threshold (nothing to cut); with a read after it, the
    # task (too large to keep) is summarised
    model = ScriptedModel(reads(1), context_window=WINDOW)
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "t" * 6000)

    start, _, end = events_of(events)
    assert (start.data["step"], end.data["outcome"]) == (2, "summarized")
    assert (end.data["turn"], end.data["step"]) == (1, 2)  # the end says where, too
    assert events[-1].data["reason"] == "completed"


@pytest.mark.parametrize(("shorter", "outcome"), [(0, "failed"), (1, "summarized")])
async def test_a_summary_must_be_smaller_than_what_it_replaces(shorter: int, outcome: str) -> None:
    class Sized:
        @hookimpl(optionalhook=True)
        def compaction_summarize(self, messages: Sequence[Message]) -> str:
            replaced = sum(CHARS.count_message(m) for m in messages)
            return "x" * (replaced - len(SUMMARY_HEADER) - shorter)

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, extra=[("sized", Sized())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    end = events_of(events, "compact/end")[0]
    assert end.data["outcome"] == outcome
    if outcome == "failed":
        assert end.data["error"]["code"] == "SUMMARY_NOT_SMALLER"


async def test_a_history_changed_while_the_summary_was_written_is_left_as_it_is() -> None:
    class PruneMeanwhile:
        """Changes the last summarised message (just before the cut) while summarising."""

        @hookimpl(optionalhook=True)
        async def compaction_summarize(self, agent: Any, messages: Sequence[Message]) -> str:
            last = messages[-1]
            assert isinstance(last, ToolResultMessage)
            index = next(i for i, m in enumerate(agent.session.history) if m is last)
            entry = {"index": index, "call_id": last.call_id, "content": "gone"}
            await agent.session.emit("compact/prune", {"pruned": [entry], "tokens_saved": 0})
            return "summary"

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, extra=[("meanwhile", PruneMeanwhile())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        history = list(agent.session.history)

    end = events_of(events, "compact/end")[0]
    assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "HISTORY_CHANGED")
    assert not events_of(events, "compact/summary")
    assert len(history) == 12 and history[8].content == "gone"


async def test_a_summariser_stream_raising_a_plain_exception_is_a_model_failure() -> None:
    def broken(request: Any) -> str:
        raise RuntimeError("connection reset")

    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer(broken)) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    end = events_of(events, "compact/end")[0]
    assert end.data["error"] == {"code": "UNKNOWN", "message": "RuntimeError: connection reset"}


@pytest.mark.parametrize(
    ("written", "outcome", "detail"),
    [
        ("  the summary \n", "summarized", "the summary"),
        ("", "failed", "EMPTY_SUMMARY"),
        (" \n ", "failed", "EMPTY_SUMMARY"),
        (42, "failed", "HOOK"),  # naming the plugin
    ],
)
async def test_a_plugins_summary_is_stripped_and_must_be_a_non_empty_str(
    written: Any, outcome: str, detail: str
) -> None:
    class Writes:
        @hookimpl(optionalhook=True)
        def compaction_summarize(self) -> Any:
            return written

    model = ScriptedModel(reads(5), context_window=WINDOW)
    summariser = summarizer()  # never asked, not even after an empty summary
    async with harness(model, summariser, extra=[("writes", Writes())]) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")

    end = events_of(events, "compact/end")[0]
    assert end.data["outcome"] == outcome
    if outcome == "summarized":
        assert events_of(events, "compact/summary")[0].data["summary"] == detail
    else:
        assert end.data["error"]["code"] == detail
    assert summariser.requests == []


async def test_the_prompt_setting_replaces_the_summarisers_instructions() -> None:
    summariser = summarizer("s")
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options(prompt="Summarise tersely."))
        await run_turn(agent, "task")

    (request,) = summariser.requests
    assert request.system == "Summarise tersely."
    assert request.messages[0].content.endswith("\n</conversation>\n\nWrite the summary now.")


# --- the estimate's counter and the settings an agent runs with -----------------------------


async def heuristic_start(window: int, *extra: Any, **settings: Any) -> Any:
    """The first compaction's start data of a reads(5) turn without CharCounter."""
    model = ScriptedModel(reads(5), context_window=window)
    async with harness(model, summarizer("s"), extra=list(extra), chars=False) as h:
        agent = await h.agents.create("a", options=options(**settings))
        events = await run_turn(agent, "task")
    assert events[-1].data["reason"] == "completed"
    starts = events_of(events, "compact/start")
    return starts[0].data if starts else None


@pytest.mark.parametrize("counter", [RuntimeError("no tokenizer"), "not a counter"])
async def test_a_broken_token_counter_falls_back_to_the_heuristic(counter: Any) -> None:
    class Counts:
        @hookimpl(optionalhook=True)
        def compaction_token_counter(self) -> Any:
            if isinstance(counter, Exception):
                raise counter
            return counter

    start = await heuristic_start(2000, ("counts", Counts()))

    assert start is not None and start == await heuristic_start(2000)


async def test_chars_per_token_tunes_the_default_estimate() -> None:
    assert await heuristic_start(WINDOW) is None  # ~4 characters a token: far below

    start = await heuristic_start(WINDOW, chars_per_token=1.0)

    assert start is not None and start["tokens"] > 0.8 * WINDOW


async def test_changed_agent_options_apply_from_the_next_request() -> None:
    class Models:
        def __init__(self) -> None:
            self.asked: list[str | None] = []

        @hookimpl(optionalhook=True)
        def compaction_token_counter(self, model: str | None) -> None:
            self.asked.append(model)  # None: the heuristic

    models = Models()
    model = ScriptedModel(reads(5), context_window=WINDOW)
    other = ScriptedModel(["fine", "fine again"], name="other", context_window=WINDOW)
    async with harness(model, other, summarizer("s"), extra=[("m", models)], chars=False) as h:
        agent = await h.agents.create("a", options=options())
        first = await run_turn(agent, "task")  # ~2000 tokens by the heuristic
        agent.agent.options["model"] = "other"
        second = await run_turn(agent, "next")
        asked = list(models.asked)
        agent.agent.options["compaction"] = {"model": "summarizer", "chars_per_token": 1.0}
        third = await run_turn(agent, "again")

    assert events_of(first) == events_of(second) == []
    assert asked == ["scripted", "other"]  # asked once per model
    assert events_of(third, "compact/start")[0].data["step"] == 1  # ~7000 tokens now


def test_an_agent_without_weak_references_keeps_one_state_until_forgotten() -> None:
    from dsh_compaction._state import forget

    class Slotted:
        __slots__ = ("id",)

    agent = Slotted()

    state = state_for(agent)

    assert state_for(agent) is state
    forget(agent)
    assert state_for(agent) is not state


async def test_a_request_exactly_at_the_threshold_is_not_compacted() -> None:
    # the second request: 4368 + a read of 1232 = 5600 = 0.8 * 7000
    model = ScriptedModel(reads(1), context_window=WINDOW)
    async with harness(model, summarizer("s")) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "t" * 4368)

    assert events_of(events) == []
    assert events[-1].data["reason"] == "completed"
