"""Review of session 13's core changes: tests that kill the hand mutants the existing
tests let through (key whitespace, a plugin's stop reason, the hook recorder first)."""

from __future__ import annotations

import anyio
from loop_support import LIMIT, agent_on, ends

from dsh import ContinuationDecision, hookimpl
from dsh._secrets import secret_values
from dsh.config import ModelConfig
from dsh.session import Session
from dsh.testing import ScriptedModel, run_turn, text
from dsh.turns import turns

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"


# -- whitespace around a key -----------------------------------------------------------------


def test_a_key_loses_the_whitespace_on_both_sides() -> None:
    config = ModelConfig(provider="openai-compatible", base_url="http://h/v1", api_key_env="K")
    assert config.api_key({"K": f" \t{KEY}\r\n"}) == KEY
    assert config.api_key({"K": " \r\n\t "}) is None  # only whitespace: no key


def test_the_secrets_to_hide_lose_the_whitespace_on_both_sides() -> None:
    assert secret_values(None, {"OPENAI_API_KEY": f"\t {KEY}\r\n"}) == (KEY,)


def test_a_key_of_whitespace_only_is_not_a_secret_to_hide() -> None:
    """Kept, twelve spaces would be a 'secret': every run of 8 spaces or more in a tool's
    result (indented code) would become ***."""
    assert secret_values(None, {"OPENAI_API_KEY": " " * 12, "DEEPSEEK_API_KEY": "\r\n" * 6}) == ()


# -- a plugin's reason: stopped only for a stop -------------------------------------------


class ContinueOnce:
    """Continues step 1 with a reason (logged as steering); decides nothing after."""

    @hookimpl
    def agent_turn_continuation(self, step: int) -> ContinuationDecision | None:
        if step == 1:
            return ContinuationDecision(action="continue", reason="check your answer")
        return None


async def test_a_continue_reason_is_not_the_turns_stopped() -> None:
    model = ScriptedModel([text("draft"), text("final")])
    async with agent_on(model, ("check", ContinueOnce())) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "question")
    assert ends(events) == [(1, "completed")]
    assert "stopped" not in events[-1].data


class StopWithReason:
    @hookimpl
    def agent_turn_continuation(self) -> ContinuationDecision:
        return ContinuationDecision(action="stop", reason="budget: 1 step")


async def test_a_stop_reason_is_the_prompts_result_stopped() -> None:
    model = ScriptedModel([text("answer")])
    async with agent_on(model, ("budget", StopWithReason())) as (_, agent):
        with anyio.fail_after(LIMIT):
            result = await agent.prompt("question")
    assert (result.reason, result.stopped) == ("completed", "budget: 1 step")
    assert result.events[-1].data["stopped"] == "budget: 1 step"


def test_a_logs_stopped_is_read_only_when_it_is_a_str() -> None:
    """A resumed log: an old turn/end has no ``stopped``; a hand-edited one that is not a
    str is not passed on as one."""
    session = Session("s")
    for stopped in (None, "guard: 5 tool calls", 5):
        session._append("turn/start", {"turn": 1})
        data: dict[str, object] = {"turn": 1, "reason": "completed"}
        if stopped is not None:
            data["stopped"] = stopped
        session._append("turn/end", data)
    assert [t.stopped for t in turns(session.events)] == [None, "guard: 5 tool calls", None]
