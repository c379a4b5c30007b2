"""The summariser's requests fit the window they are planned for: a long entry is split
across chunks, the window is the one configured (not the history's size), and a
summariser's refused request says that it was the summariser's (and, when its server
states a smaller window, the summary is started again once for that window)."""

from __future__ import annotations

import pytest
from compaction_util import BY_HAND, StatingSummariser, by_hand, compacted_by_hand, harness

import dsh_compaction
from dsh.testing import InMemoryPersistence, ScriptedModel, fail, run_turn

pytestmark = pytest.mark.plugins("compaction")


async def test_one_long_message_is_split_so_each_summary_request_fits() -> None:
    """A message longer than a chunk was sent whole: the summary request was larger
    than the window, and every compaction failed from then on."""
    server = StatingSummariser(1500)
    long = "HEAD " + "abcd " * 1000 + " TAIL"  # ~1,250 tokens, below the 6,000-char clip
    result, _ = await compacted_by_hand(
        server.model, long, "small question", "another one", "and more"
    )

    assert result.outcome == "summarized", result
    assert max(server.needed) <= 1500
    sent = "".join(r.messages[0].content for r in server.requests)
    assert "HEAD" in sent and "TAIL" in sent  # split, not cut


async def test_a_refused_summary_request_says_it_was_the_summarisers() -> None:
    server = StatingSummariser(100_000, refuse_over=500)  # the real window is smaller
    result, _ = await compacted_by_hand(server.model, "one " * 300, "two", "three")

    assert result.outcome == "failed"
    assert result.error is not None
    assert result.error["code"] == "CONTEXT_WINDOW_EXCEEDED"
    message = result.error["message"]
    assert "summariser's request" in message and "'summarizer'" in message
    assert "you requested" in message  # the provider's own words are kept


async def test_a_summariser_that_states_its_window_is_asked_again_for_it() -> None:
    """Its server's own refusal stated the window (2,000 tokens behind the 100,000 of its
    info): the compaction failed, every time, though chunks sized for that window fit."""
    server = StatingSummariser(100_000, refuse_over=2000, states=2000)
    result, _ = await compacted_by_hand(server.model, "one " * 2000, "two", "three")

    assert result.outcome == "summarized", result
    refused = [n for n in server.needed if n > 2000]
    assert len(refused) == 1 and server.needed[0] in refused  # then sized for 2,000
    assert len(server.needed) > 2  # the retry's chunks


async def test_a_summarisers_stated_window_is_kept_for_the_harness(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Kept for that summary only, the stated window was learned again, with a refused
    request, by every later compaction, of this agent or another of the harness."""
    caplog.set_level("WARNING", logger="dsh_compaction")
    server = StatingSummariser(100_000, refuse_over=2000, states=2000)
    model = ScriptedModel(["ok"] * 9, context_window=100_000)
    prompts = ("one " * 2000, "two", "three")
    async with harness(model, server.model, chars=False) as h:
        first = await h.agents.create("a", options=BY_HAND)
        results = [await by_hand(first, *prompts)]
        learned = len(server.needed)
        results.append(await by_hand(first, *prompts))
        other = await h.agents.create("b", options=BY_HAND)
        results.append(await by_hand(other, *prompts))

    assert [r.outcome for r in results] == ["summarized"] * 3, results
    assert len([n for n in server.needed if n > 2000]) == 1  # the first request only
    assert len(server.needed) > learned + 2  # the later compactions asked, in chunks
    warned = [r.getMessage() for r in caplog.records if "summariser" in r.getMessage()]
    assert warned == [
        "summariser model 'summarizer': the server says its context window is 2,000 "
        "tokens (compaction planned for 100,000); compaction plans the summariser's "
        "requests with the server's while the harness runs; set context_window in dsh.yml "
        "(the model's entry) to 2000"
    ]


async def test_a_summariser_refused_again_for_its_stated_window_fails() -> None:
    server = StatingSummariser(100_000, refuse_over=1000, states=2000)  # refused again
    result, _ = await compacted_by_hand(server.model, "one " * 2000, "two", "three")

    assert result.outcome == "failed" and result.error is not None
    assert "planned for a context window of 2,000 tokens" in result.error["message"]
    assert len([n for n in server.needed if n > 1000]) == 2  # once more, not again


async def test_compact_now_gives_the_summariser_the_configured_window() -> None:
    """/compact planned the summariser for the history's size: a small answer limit
    (a quarter of it) and more calls than the window needs."""
    blind = ScriptedModel(["by hand"], name="summarizer", context_window=None)
    model = ScriptedModel(["a" * 400] * 3, context_window=None)
    settings = {**BY_HAND["compaction"], "context_window": 40_000}
    async with harness(model, blind) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "compaction": settings})
        for i in range(3):
            await run_turn(agent, str(i) * 400)
        result = await dsh_compaction.compact_now(agent)

    assert result.outcome == "summarized"
    (request,) = blind.requests
    assert request.max_tokens == 2048  # max_summary_tokens, not a quarter of ~2,400


@pytest.mark.parametrize("window", [40_000, None], ids=["known", "unknown"])
async def test_an_overflow_plans_the_summariser_for_the_refused_size(window: int | None) -> None:
    """The provider refused the request: the window is smaller than it, whatever window
    was known (a summary request sized for the known one would be refused too)."""
    blind = ScriptedModel(["summary"] * 9, name="summarizer", context_window=None)
    overflow = fail("CONTEXT_WINDOW_EXCEEDED", "prompt is too long")
    model = ScriptedModel(["a" * 500] * 3 + [overflow, "fits"], context_window=window)
    async with harness(model, blind) as h:
        agent = await h.agents.create(
            "a", options={"model": "scripted", "compaction": {"model": "summarizer"}}
        )
        for i in range(4):
            await run_turn(agent, str(i) * 500)

    # CharCounter: the refused request held ~3,400 tokens; a quarter of it is the answer
    assert blind.requests
    assert all(r.max_tokens is not None and r.max_tokens < 1000 for r in blind.requests)


async def test_a_window_too_small_for_the_summarisers_prompt_is_said_before_a_call() -> None:
    server = StatingSummariser(700)  # the default prompt (~330 tokens), two answers of 175
    result, _ = await compacted_by_hand(server.model, "one " * 100, "two", "three")

    assert result.outcome == "failed" and result.error is not None
    assert "summariser's request was too long" in result.error["message"]
    assert "leave too little room" in result.error["message"]
    assert server.needed == []


async def test_a_stored_summariser_that_is_gone_says_where_it_comes_from() -> None:
    """A continued session keeps the options it was created with: a summariser of
    them that dsh.yml no longer defines failed every compaction with no hint of where
    the name came from or how to replace it."""
    model = ScriptedModel(["ok"] * 3, context_window=100_000)
    async with harness(model, extra=[("mem", InMemoryPersistence())]) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        for prompt in ("one " * 300, "two", "three"):
            await run_turn(agent, prompt)
        stored = {"model": "scripted", "compaction": {"model": "gone", "enabled": False}}
        await agent.dispose()
        resumed = await h.agents.resume("a", agent.session.id, options=stored)
        result = await dsh_compaction.compact_now(resumed)

    assert result.error is not None and result.error["code"] == "NO_MODEL"
    message = result.error["message"]
    assert message.startswith("the summariser model 'gone' is not registered (registered: ")
    assert "the option compaction.model of agent 'a'" in message
    assert "options it was created with" in message
    assert "agents: [{id: a, options: {compaction: {model: ...}}}]" in message


async def test_an_overflow_plans_the_agents_own_model_for_the_refused_size() -> None:
    """The summariser is the agent's model (the default), whose stated window (40,000)
    the refused request just proved too large: its summary requests are planned for the
    refused size, each smaller than the refused request, not for the stated window."""
    overflow = fail("CONTEXT_WINDOW_EXCEEDED", "prompt is too long")
    script = ["a" * 500] * 3 + [overflow] + ["## Goal\nthe user typed digits"] * 9
    model = ScriptedModel(script, context_window=40_000)
    async with harness(model) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "compaction": {}})
        for i in range(4):
            await run_turn(agent, str(i) * 500)
        (start,) = [e for e in agent.session.events if e.type == "compact/start"]

    refused = start.data["tokens"]
    assert start.data["reason"] == "overflow" and refused < 4_000
    asked = [r for r in model.requests if r.system == dsh_compaction.DEFAULT_PROMPT]
    assert asked
    for request in asked:  # CharCounter: a token per character
        (message,) = request.messages
        size = len(request.system or "") + len(str(message.content)) + (request.max_tokens or 0)
        assert size <= refused


async def test_an_overflow_leaves_another_summarisers_stated_window() -> None:
    """A summariser of its own, stating its window, is planned for it after the agent's
    model overflowed: the refused request says nothing of another model's window."""
    own = ScriptedModel(["summary"] * 9, name="summarizer", context_window=40_000)
    overflow = fail("CONTEXT_WINDOW_EXCEEDED", "prompt is too long")
    model = ScriptedModel(["a" * 500] * 3 + [overflow, "fits"], context_window=40_000)
    async with harness(model, own) as h:
        agent = await h.agents.create(
            "a", options={"model": "scripted", "compaction": {"model": "summarizer"}}
        )
        for i in range(4):
            await run_turn(agent, str(i) * 500)

    (request,) = own.requests
    assert request.max_tokens == 2048  # max_summary_tokens, a quarter of 40,000 is more
