"""Options are read at each step (docs/python.md), so a core option changed to a bad value
after the agent was created ends the turn ``error`` naming the agent and the option, as
``agents.create`` would; nothing ill-typed reaches the model, no traceback is logged, and
the agent serves the next prompt once the option is right again.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from loop_support import LIMIT

from dsh.testing import ScriptedModel, fail, scripted_harness, tool_calls
from dsh.turns import turns

BAD = [
    ("model", 5, "option 'model' must be a model name (str), not 5"),
    ("system_prompt", ["not", "a", "str"], "option 'system_prompt' must be a str, not a list"),
    ("max_tokens", "lots", "option 'max_tokens' must be an int > 0, not a str"),
    ("max_tokens", 0, "option 'max_tokens' must be an int > 0, not 0"),
    ("max_tokens", True, "option 'max_tokens' must be an int > 0, not True"),
    ("max_steps", "lots", "option 'max_steps' must be an int > 0, not a str"),
    ("max_steps", 0, "option 'max_steps' must be an int > 0, not 0"),
    ("queue_mode", "fifo", "option 'queue_mode' must be 'batch' or 'one-at-a-time'"),
    ("queue_mode", "one-at-a-tim", "option 'queue_mode' must be 'batch' or 'one-at-a-time'; "),
    ("queue_mode", None, "option 'queue_mode' must be 'batch' or 'one-at-a-time', not None"),
]
GOOD = {
    "model": "scripted",
    "system_prompt": "",
    "max_tokens": None,
    "max_steps": 5,
    "queue_mode": "batch",
}


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize(("key", "value", "said"), BAD)
async def test_a_bad_option_set_after_creation_ends_the_turn_naming_it(
    key: str, value: Any, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel(["after the fix"])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        agent.options[key] = value
        with anyio.fail_after(LIMIT):
            result = await agent.prompt("hi")
        assert result.reason == "error"
        assert result.error is not None
        assert result.error["message"].startswith(f"agent 'a': {said}")
        assert model.requests == []  # nothing ill-typed reached the model
        no_traceback(caplog)
        agent.options[key] = GOOD[key]
        with anyio.fail_after(LIMIT):
            again = await agent.prompt("hi")
        assert (again.reason, again.text) == ("completed", "after the fix")


@pytest.mark.parametrize(
    ("created", "changed", "turns_taken"),
    [
        ("batch", "one-at-a-time", [["a"], ["b"], ["c"]]),
        ("one-at-a-time", "batch", [["a", "b", "c"]]),
    ],
)
async def test_a_queue_mode_changed_after_creation_applies_from_the_next_turn(
    created: str, changed: str, turns_taken: list[list[str]]
) -> None:
    model = ScriptedModel(["A", "B", "C"])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "queue_mode": created})
        agent.options["queue_mode"] = changed
        for prompt in "abc":  # queued before the loop takes any
            agent.send(prompt)
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert [t.prompts for t in turns(agent.session.events)] == turns_taken


async def test_a_bad_option_set_during_a_turn_ends_it_before_the_next_request() -> None:
    from dsh import hookimpl

    class Spoiler:
        @hookimpl
        def agent_step_result(self, agent: Any, message: Any) -> Any:
            agent.options["max_tokens"] = "lots"  # a plugin changes it mid-turn
            return message

    model = ScriptedModel([tool_calls(("nothing", {})), "never asked"])
    async with scripted_harness(
        model, plugins=[("spoiler", Spoiler())], load_entry_points=False
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            result = await agent.prompt("hi")
        assert result.reason == "error" and result.error is not None
        assert "option 'max_tokens' must be an int > 0, not a str" in result.error["message"]
        assert len(model.requests) == 1
        [turn] = turns(agent.session.events)
        assert turn.reason == "error"


async def test_a_bad_max_request_retries_is_named_when_a_request_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel([fail("SERVER", "upstream 500")])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        agent.options["max_request_retries"] = "twice"
        with anyio.fail_after(LIMIT):
            result = await agent.prompt("hi")
        assert result.reason == "error" and result.error is not None
        assert result.error["message"] == (
            "agent 'a': option 'max_request_retries' must be an int >= 0, not a str"
        )
        no_traceback(caplog)
