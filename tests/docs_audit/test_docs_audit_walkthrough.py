"""What a third-party author's walkthrough added to docs/hooks.md ("Logging events of
your own", register_tools) and docs/testing.md (scripted usage, EventRecorder), pinned
from the author's side: each test quotes the sentence it checks."""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Any

import pytest

from dsh import ToolResultMessage, Usage, hookimpl
from dsh.testing import (
    EventRecorder,
    ScriptedModel,
    check_invariants,
    max_tokens,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)

DOCS = Path(__file__).parents[2] / "docs"


def said(page: str, sentence: str) -> None:
    assert sentence in " ".join((DOCS / page).read_text(encoding="utf-8").split())


async def test_a_scripted_step_reports_ten_input_tokens_and_one_output_per_part() -> None:
    """testing.md: "Unless given `usage=` (a `dsh.Usage`), a step reports 10 input tokens
    and one output token per text part (one for a tool-call answer)"."""
    said("testing.md", "a step reports 10 input tokens and one output token per text part")
    model = ScriptedModel([tool_calls(("ls", {"path": "."})), text("a", "b", "c")])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "go")
    usages = [e.data["message"]["usage"] for e in events if e.type == "assistant/message"]
    assert [(u["input_tokens"], u["output_tokens"]) for u in usages] == [(10, 1), (10, 3)]


async def test_usage_sets_what_each_scripted_answer_reports() -> None:
    """testing.md: "`text("a", usage=Usage(input_tokens=900, output_tokens=40))` | reports
    that usage for the step (also `tool_calls(..., usage=...)`, `max_tokens(...,
    usage=...)`)"."""
    said("testing.md", "reports that usage for the step (also `tool_calls(..., usage=...)`")
    model = ScriptedModel(
        [
            tool_calls(("ls", {"path": "."}), usage=Usage(input_tokens=1, output_tokens=2)),
            max_tokens("cut", usage=Usage(input_tokens=3, output_tokens=4)),
            text("a", usage=Usage(input_tokens=900, output_tokens=40, cache_read_tokens=7)),
        ]
    )
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        first = await run_turn(agent, "go")
        second = await run_turn(agent, "again")
    usages = [e.data["message"]["usage"] for e in first + second if e.type == "assistant/message"]
    assert [(u["input_tokens"], u["output_tokens"]) for u in usages] == [(1, 2), (3, 4), (900, 40)]
    assert usages[2]["cache_read_tokens"] == 7
    assert first[-1].data["reason"] == "max-tokens"


async def test_the_event_recorder_holds_session_id_and_event_pairs() -> None:
    """testing.md: "`events` is a list of `(session id, event)` pairs, `types(session_id=
    None)` their types; `check_invariants([e for sid, e in recorder.events if sid ==
    agent.session.id])` checks one session's log as it saw it"."""
    said("testing.md", "`events` is a list of `(session id, event)` pairs")
    recorder = EventRecorder()
    async with scripted_harness(
        ScriptedModel(["one", "two"]), plugins=[recorder], load_entry_points=False
    ) as h:
        first = await h.agents.create("a", options={"model": "scripted"})
        second = await h.agents.create("b", options={"model": "scripted"})
        await run_turn(first, "go")
        await run_turn(second, "go")
    assert {sid for sid, _ in recorder.events} == {first.session.id, second.session.id}
    assert recorder.types(second.session.id) == [e.type for e in second.session.events]
    for agent in (first, second):
        seen = [e for sid, e in recorder.events if sid == agent.session.id]
        assert seen == list(agent.session.events)
        assert check_invariants(seen) == []


class TupleLogger:
    @hookimpl
    async def agent_request(self, agent: Any, turn: int) -> None:
        await agent.session.emit("audit/step", {"turn": turn, "tools": ("ls",)})


async def test_event_data_that_is_not_json_ends_the_turn_naming_the_plugin_and_key() -> None:
    """hooks.md: "Anything else (a tuple, a pydantic model) raises `dsh.EventDataError`
    naming the type and the key ...; in an interception hook that ends the turn `error`,
    naming your plugin"."""
    said("hooks.md", "data.tools: tuple values are not lossless JSON`); in an interception")
    model = ScriptedModel()
    async with scripted_harness(
        model, plugins=[("audit", TupleLogger())], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "go")
    end = events[-1].data
    assert (end["reason"], end["error"]["plugin"], end["error"]["hook"]) == (
        "error",
        "audit",
        "agent_request",
    )
    assert "event 'audit/step' data at data.tools: tuple values" in end["error"]["message"]
    assert model.requests == []  # the step never reached the model


class Appender:
    @hookimpl
    def agent_request(self, agent: Any, step: int) -> None:
        agent.session.append("audit/step", {"step": step})


@pytest.mark.plugins("persistence")
async def test_an_appended_event_reaches_no_observer_but_is_stored(tmp_path: Path) -> None:
    """hooks.md: "Do not use `session.append`: it logs without telling any observer, so
    a `session_event` observer ... never sees the event, though a store that copies
    `session.events` at each flush (dsh-persistence) still keeps it"."""
    said("hooks.md", "a `session_event` observer (an audit log, a UI) never sees the event")
    recorder = EventRecorder()
    async with scripted_harness(
        ScriptedModel(["hi"]), plugins=[("audit", Appender()), recorder], workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "go")
        live = [(e.seq, e.type) for e in agent.session.events]
        service = await h.relay.session_persistence()
        assert service is not None
        stored = await service.load(agent.session.id)
    assert stored is not None
    assert (3, "audit/step") in live
    assert [(e.seq, e.type) for e in stored.events] == live
    assert [(e.seq, e.type) for _, e in recorder.events] == [
        x for x in live if x[1] != "audit/step"
    ]


class KeyTable:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        from dsh.tools import tool

        @tool
        async def lookup(key: str) -> str:
            """Look a key up."""
            return {"a": "alpha"}[key]

        register(lookup)


async def test_a_raising_async_tool_shows_the_model_its_type_and_str(tmp_path: Path) -> None:
    """hooks.md, register_tools: "the model reads an error result, `tool 'NAME' failed:
    TYPE: MESSAGE` (the exception's type and `str()`) ... `str()` of a `KeyError` is its
    key's repr, quoted"."""
    said("hooks.md", "`tool 'NAME' failed: TYPE: MESSAGE` (the exception's type and `str()`)")
    model = ScriptedModel([tool_calls(("lookup", {"key": "zz"})), text("none")])
    async with scripted_harness(
        model, plugins=[("table", KeyTable())], load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "go")
    seen = model.requests[1].messages[-1]
    assert isinstance(seen, ToolResultMessage)
    assert (seen.content, seen.is_error) == ("tool 'lookup' failed: KeyError: 'zz'", True)


async def test_the_example_of_logging_events_of_your_own_runs(tmp_path: Path) -> None:
    """hooks.md, "Logging events of your own": its example, as written, logs an
    audit/step event inside each step, before the model is called."""
    page = (DOCS / "hooks.md").read_text(encoding="utf-8")
    section = page[page.index("## Logging events of your own") :]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    example = types.ModuleType("hooks_md_audit_example")
    exec(compile(found[1], "hooks.md", "exec"), example.__dict__)
    model = ScriptedModel([tool_calls(("ls", {"path": "."})), text("listed")])
    async with scripted_harness(
        model, plugins=[("audit", example)], load_entry_points=False, workspace=tmp_path
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "list")
    offered = [sorted(spec.name for spec in request.tools) for request in model.requests]
    logged = [(e.data["step"], sorted(e.data["tools"])) for e in events if e.type == "audit/step"]
    assert logged == [(1, offered[0]), (2, offered[1])]
    types_ = [e.type for e in events]
    assert types_.index("audit/step") == types_.index("step/start") + 1
