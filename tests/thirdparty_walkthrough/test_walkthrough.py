"""A third-party author's walkthrough: the plugins of walkthrough_plugins.py, written from
the docs alone, tested with ``dsh.testing`` as docs/testing.md says. Each test is one
thing such an author relies on. They pass their plugins to the harness with
``load_entry_points=False``, so they run the same under every plugin set of the nox
matrix; the one that needs dsh-persistence says so with ``@pytest.mark.plugins``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from walkthrough_plugins import AuditLog, BudgetGuard, Lookup

from dsh import ConfigError, ToolResultMessage, Usage
from dsh.testing import (
    EventRecorder,
    ScriptedModel,
    check_invariants,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)

SCRIPTED = "models: {scripted: {provider: scripted}}\n"


async def test_the_budget_stops_a_turn_after_its_tool_calls_with_its_reason(
    tmp_path: Path,
) -> None:
    """BEHAVIOURS 23: a plugin's stop ends the turn even after tool calls; hooks.md: its
    reason is the turn/end event's ``stopped``."""
    model = ScriptedModel(
        [tool_calls(("lookup", {"key": "a"}), ("lookup", {"key": "b"})), text("never")]
    )
    async with scripted_harness(
        model,
        plugins=[("budget", BudgetGuard()), ("lookup", Lookup())],
        load_entry_points=False,
        config_text=SCRIPTED + "budget: {max_tool_calls: 2}\n",
        workspace=tmp_path,
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "look a and b up")
    end = events[-1]
    assert (end.type, end.data["reason"]) == ("turn/end", "completed")
    assert end.data["stopped"] == "budget: 2 tool calls (max 2)"
    assert [e.data["content"] for e in events if e.type == "tool/result"] == ["alpha", "beta"]
    assert len(model.requests) == 1  # the step after the tool calls never ran
    assert len(model.script) - len(model.requests) == 1  # "never" was left


async def test_the_budget_counts_the_tokens_the_model_reports(tmp_path: Path) -> None:
    """testing.md: ``text(..., usage=Usage(...))`` and ``tool_calls(..., usage=...)``
    script the tokens a step reports, so a token budget is tested with real numbers."""
    model = ScriptedModel(
        [
            tool_calls(("lookup", {"key": "a"}), usage=Usage(input_tokens=300, output_tokens=20)),
            tool_calls(("lookup", {"key": "b"}), usage=Usage(input_tokens=400, output_tokens=30)),
            text("never"),
        ]
    )
    async with scripted_harness(
        model,
        plugins=[("budget", BudgetGuard()), ("lookup", Lookup())],
        load_entry_points=False,
        config_text=SCRIPTED + "budget: {max_tokens: 500}\n",
        workspace=tmp_path,
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "look a and b up")
    assert events[-1].data["stopped"] == "budget: 750 tokens (max 500)"
    assert events[-1].data["usage"]["input_tokens"] == 700
    assert len(model.requests) == 2


async def test_the_budget_is_per_turn_and_forgotten_with_the_agent(tmp_path: Path) -> None:
    """The turn number each hook receives (hooks.md) scopes the budget: a second turn
    starts from nothing, and agent_disposed drops what was counted."""
    guard = BudgetGuard()
    script = [
        tool_calls(("lookup", {"key": "a"})),
        text("alpha"),
        tool_calls(("lookup", {"key": "b"})),
        text("beta"),
    ]
    model = ScriptedModel(script)
    async with scripted_harness(
        model,
        plugins=[("budget", guard), ("lookup", Lookup())],
        load_entry_points=False,
        config_text=SCRIPTED + "budget: {max_tool_calls: 2}\n",
        workspace=tmp_path,
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        ends = [(await run_turn(agent, prompt))[-1].data for prompt in ("a?", "b?")]
        assert guard.spent == {agent.session.id: (2, 1, 22)}
    assert [("stopped" in end, end["reason"]) for end in ends] == [(False, "completed")] * 2
    assert guard.spent == {}
    model.assert_complete()


async def test_an_agents_own_budget_is_laid_over_the_section(tmp_path: Path) -> None:
    """hooks.md, register_settings: an agent's ``options.budget`` is the mapping as
    written; the plugin layers it over the section (here: the agent's limit wins)."""
    config = SCRIPTED + (
        "budget: {max_tool_calls: 5}\n"
        "agents:\n  - {id: tight, model: scripted, options: {budget: {max_tool_calls: 1}}}\n"
    )
    model = ScriptedModel([tool_calls(("lookup", {"key": "a"})), text("never")])
    async with scripted_harness(
        model,
        plugins=[("budget", BudgetGuard()), ("lookup", Lookup())],
        load_entry_points=False,
        config_text=config,
        workspace=tmp_path,
    ) as h:
        agent = h.agents.get("tight")
        assert agent is not None
        events = await run_turn(agent, "look a up")
    assert events[-1].data["stopped"] == "budget: 1 tool calls (max 1)"


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ("budget: {max_tool_calls: 0}\n", "1:10: budget.max_tool_calls: Input should be greater"),
        ("budget: {max_tokns: 3}\n", "1:10: budget.max_tokns: unknown key"),
        (
            "agents:\n  - {id: a, options: {budget: {max_tokens: nope}}}\n",
            "2:32: agents[0].options.budget.max_tokens: Input should be a valid integer",
        ),
    ],
)
async def test_a_bad_budget_is_refused_naming_the_key_and_its_place(
    config: str, problem: str, tmp_path: Path
) -> None:
    """hooks.md, register_settings: unknown keys and bad values fail with the file, the
    key's path and the reason, in the section and in an agent's options alike."""
    with pytest.raises(ConfigError, match=re.escape(problem)):
        async with scripted_harness(
            plugins=[("budget", BudgetGuard())],
            load_entry_points=False,
            config_text=config,
            workspace=tmp_path,
        ):
            pass


async def test_an_async_tool_that_raises_is_an_error_result_the_model_reads(
    tmp_path: Path,
) -> None:
    """BEHAVIOURS 18: a tool that raises gives an error result and the turn continues;
    the model's next request ends with it, as tools.md words it."""
    model = ScriptedModel([tool_calls(("lookup", {"key": "zz"})), text("no such key")])
    async with scripted_harness(
        model, plugins=[("lookup", Lookup())], load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "look zz up")
    seen = model.requests[1].messages[-1]
    assert isinstance(seen, ToolResultMessage)
    said = "tool 'lookup' failed: LookupError: no entry 'zz'; known keys: a, b"
    assert (seen.role, seen.content, seen.is_error) == ("tool", said, True)
    assert events[-1].data["reason"] == "completed"
    model.assert_complete()


async def test_the_audit_log_has_a_line_per_event_its_own_events_included(
    tmp_path: Path,
) -> None:
    """hooks.md: an event a plugin logs with ``session.emit`` inside the turn reaches
    every ``session_event`` observer, in seq order, and the log stays well formed."""
    log = tmp_path / "audit.jsonl"
    recorder = EventRecorder()
    model = ScriptedModel([tool_calls(("lookup", {"key": "a"})), text("alpha")])
    async with scripted_harness(
        model,
        plugins=[("audit", AuditLog(log)), ("lookup", Lookup()), recorder],
        load_entry_points=False,
        workspace=tmp_path,
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "look a up")
    steps = [e.data for e in events if e.type == "audit/step"]
    tools = [len(request.tools) for request in model.requests]  # the built-in tools and lookup
    assert steps == [{"turn": 1, "step": s, "tools": n} for s, n in enumerate(tools, 1)]
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(x["seq"], x["type"]) for x in lines] == [(e.seq, e.type) for _, e in recorder.events]
    assert [x["seq"] for x in lines] == list(range(len(lines)))
    assert check_invariants([event for _, event in recorder.events]) == []


@pytest.mark.plugins("persistence")
async def test_a_plugin_event_is_stored_and_comes_back_on_resume(tmp_path: Path) -> None:
    """hooks.md: an emitted event is stored like the core's (dsh-persistence writes
    what ``session_event`` shows it) and a resumed session has it, in its place."""
    config = SCRIPTED + "agents:\n  - {id: a, model: scripted}\n"
    model = ScriptedModel(["hi"])
    async with scripted_harness(
        model,
        plugins=[("audit", AuditLog(tmp_path / "audit.jsonl"))],
        config_text=config,
        workspace=tmp_path,
    ) as h:
        agent = h.agents.get("a")
        assert agent is not None
        await run_turn(agent, "hello")
        session_id = agent.session.id
        before = [(e.type, e.data) for e in agent.session.events]
    async with scripted_harness(ScriptedModel(), config_text=config, workspace=tmp_path) as h:
        resumed = await h.agents.resume("again", session_id)
        after = [(e.type, e.data) for e in resumed.session.events]
    tools = len(model.requests[0].tools)
    assert ("audit/step", {"turn": 1, "step": 1, "tools": tools}) in after
    assert after == before
