"""The system prompt and tools (and the messages a plugin adds to every request) reach
the compaction limit on their own: no summary can bring a request under it, so the
threshold does not summarise (each step would cost a summariser call and drop the
history verbatim, and the request would still be over), a warning names the numbers
once per agent, and a provider's refusal still compacts (docs/compaction.md, Limits)."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import WindowServer, events_of, harness, options, summarizer

import dsh_compaction._plugin
from dsh import ModelRequest, UserMessage, hookimpl
from dsh.testing import ScriptedModel, run_turn
from dsh_compaction import HeuristicCounter, RequestEstimator

pytestmark = pytest.mark.plugins("compaction")

WARNED = "already reach the compaction limit"


def warnings(caplog: pytest.LogCaptureFixture, part: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if part in r.getMessage()]


async def turns(
    model: ScriptedModel, count: int, agent: dict[str, Any], extra: Any = ()
) -> list[Any]:
    """``count`` turns of 300-character prompts (CharCounter: 300 tokens each) by an
    agent with the options ``agent``; the summariser has replies for each, so a summary
    would be made if asked for."""
    summaries = summarizer(*(f"summary {i}" for i in range(count)))
    async with harness(model, summaries, extra=extra) as h:
        a = await h.agents.create("a", options=agent)
        for i in range(count):
            await run_turn(a, str(i) * 300)
        return list(a.session.events)


@pytest.mark.parametrize(
    ("threshold", "max_output", "limit"),
    [
        (0.5, None, "(1,000 = threshold 0.5 of context_window 2,000)"),
        (0.9, 1000, "(1,000 = context_window 2,000 less the 1,000 tokens of output the request"),
    ],
)
async def test_b44_a_system_prompt_over_the_limit_is_not_summarised_every_turn(
    caplog: pytest.LogCaptureFixture, threshold: float, max_output: int | None, limit: str
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel(["ok"] * 4, context_window=2000, max_output_tokens=max_output)
    agent = {**options(threshold=threshold, tail_tokens=100), "system_prompt": "s" * 1200}
    events = await turns(model, 4, agent)

    assert events_of(events) == []
    assert len(model.requests) == 4  # no summariser call: the history is sent verbatim
    assert len(model.requests[-1].messages) == 7
    (warned,) = warnings(caplog, WARNED)  # once per agent, not per turn
    assert warned.startswith(
        "agent 'a': the system prompt and tools (~1,200 tokens) already reach the "
        f"compaction limit {limit}"
    )
    change = "lower max_tokens" if max_output else "raise threshold"
    assert f"; {change}, use a model with a larger window, or make them smaller" in warned
    assert warnings(caplog, "tail_tokens") == []  # tail_tokens is not to blame


LARGER = "use a model with a larger window"


@pytest.mark.parametrize(
    ("own", "setting", "threshold", "prompt", "advice"),
    [
        # the model's own window: a larger context_window would be ignored (step 1)
        (2000, None, 0.5, 1200, f"raise threshold, {LARGER}"),
        (2000, 8000, 0.5, 1200, f"raise threshold, {LARGER}"),
        (2000, None, 1.0, 2200, LARGER),  # the threshold is as high as it goes
        # over the window itself: no threshold (nor max_tokens) helps
        (2000, None, 0.5, 2200, LARGER),
        # the setting, below the model's own window: raising it helps, up to that
        (
            8000,
            2000,
            0.5,
            1200,
            "raise threshold, raise context_window (2,000) up to the model's window (8,000)",
        ),
        (8000, 2000, 0.5, 2200, "raise context_window (2,000) up to the model's window (8,000)"),
        # the setting, the model's own unknown: raising it helps if the model has more
        (
            None,
            2000,
            0.5,
            1200,
            "raise threshold, raise context_window (2,000) if the model's window is larger",
        ),
    ],
)
async def test_the_warning_suggests_only_what_would_raise_the_limit(
    caplog: pytest.LogCaptureFixture,
    own: int | None,
    setting: int | None,
    threshold: float,
    prompt: int,
    advice: str,
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel(["ok"] * 2, context_window=own)
    compaction = options(threshold=threshold, context_window=setting)["compaction"]
    agent = {"model": "scripted", "compaction": compaction, "system_prompt": "s" * prompt}
    await turns(model, 2, agent)

    (warned,) = warnings(caplog, WARNED)
    assert warned.endswith(f"; {advice}, or make them smaller")


@pytest.mark.parametrize(
    ("threshold", "prompt", "advice"),
    [
        (0.9, 1500, f"lower max_tokens, {LARGER}"),  # the threshold's share is 1,800
        (0.5, 1200, f"raise threshold and lower max_tokens, {LARGER}"),  # both 1,000
        (0.9, 2200, LARGER),  # over the window itself
    ],
)
async def test_with_output_reserved_lowering_max_tokens_is_suggested_when_it_helps(
    caplog: pytest.LogCaptureFixture, threshold: float, prompt: int, advice: str
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel(["ok"] * 2, context_window=2000, max_output_tokens=1000)
    agent = {**options(threshold=threshold), "system_prompt": "s" * prompt}
    await turns(model, 2, agent)

    (warned,) = warnings(caplog, WARNED)
    assert warned.endswith(f"; {advice}, or make them smaller")


class Note:
    """``tryfirst``, registered after compaction: appends a 900-character note to every
    request before compaction's impl sees it."""

    @hookimpl(tryfirst=True)
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        note = UserMessage(content="n" * 900)
        return request.model_copy(update={"messages": (*request.messages, note)})


async def test_b44_a_note_on_every_request_that_fills_the_limit_is_not_summarised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel(["ok"] * 3, context_window=2000)
    agent = {**options(threshold=0.5), "system_prompt": "s" * 300}
    events = await turns(model, 3, agent, extra=[("note", Note())])

    assert events_of(events) == []
    assert len(model.requests) == 3
    (warned,) = warnings(caplog, WARNED)
    assert warned.startswith(
        "agent 'a': the system prompt, the tools and the messages plugins add to the request "
        "(~1,200 tokens) already reach the compaction limit (1,000 = "
    )


async def test_a_request_over_the_limit_by_its_fixed_part_takes_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once its check is kept, such a request is decided without a coroutine (``within``),
    as one under the limit is: it is never compacted."""
    calls: list[int] = []
    impl = dsh_compaction._plugin.agent_request

    async def counted(*args: Any) -> Any:
        calls.append(args[3])
        return await impl(*args)

    monkeypatch.setattr(dsh_compaction._plugin, "agent_request", counted)
    model = ScriptedModel(["ok"] * 4, context_window=2000)
    await turns(model, 4, {**options(threshold=0.5), "system_prompt": "s" * 1200})

    assert len(calls) == 1  # the first request, before anything was kept


async def test_b44_the_provider_refusing_such_a_request_still_compacts_once_and_retries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The threshold (1,000) is below the system prompt and tools (~1,200 tokens: the
    built-in tools ~950), the window (2,000) is not: turns of ~100 tokens go on with the
    history verbatim until the server refuses a request (the eighth); then the overflow
    compaction summarises, and the step is retried."""
    caplog.set_level("WARNING", logger="dsh_compaction")
    server = WindowServer(2000, ["ok"] * 10, max_output=0)
    compaction = {"threshold": 0.5, "prune_chars": 0}
    agent = {"model": "scripted", "system_prompt": "s" * 1000, "compaction": compaction}
    async with harness(server.model, chars=False) as h:
        a = await h.agents.create("a", options=agent)
        ends = [await run_turn(a, f"{i} " * 200) for i in range(10)]
        events = list(a.session.events)

    assert [e.data["reason"] for e in events_of(events, "compact/end")] == ["overflow"]
    assert [e.data["outcome"] for e in events_of(events, "compact/end")] == ["summarized"]
    assert len(server.refused) == 1  # then the retry, compacted, fitted
    assert [turn[-1].data["reason"] for turn in ends] == ["completed"] * 10
    fixed = RequestEstimator(HeuristicCounter()).fixed(server.sent[0].system, server.sent[0].tools)
    assert 1000 < fixed < 2000
    (warned,) = warnings(caplog, WARNED)
    assert f"(~{fixed:,} tokens)" in warned
