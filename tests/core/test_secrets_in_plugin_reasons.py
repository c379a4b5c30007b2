"""A plugin's reason for a retry (``agent_request_error``) or for ending the turn
(``agent_turn_continuation``) may quote what it was given, a model's error holding a
key: the ``step/retry`` event and ``turn/end``'s ``stopped`` (the session file, ``dsh
run``'s last line, ``TurnResult.stopped``) say ``***`` for each secret dsh holds.

Before: both were logged as the plugin wrote them."""

from __future__ import annotations

from typing import Any

import anyio

from dsh import ModelError, hookimpl
from dsh.messages import ContinuationDecision, RequestErrorDecision
from dsh.testing import Reply, ScriptedModel, run_turn, scripted_harness, text

KEY = "sk-held-0123456789abcdefXYZ"


class QuotesTheError:
    """Retries once, giving the error as its reason; ends the turn quoting the key."""

    @hookimpl
    def agent_request_error(self, error: ModelError) -> RequestErrorDecision:
        return RequestErrorDecision(action="retry", reason=f"retrying after: {error}")

    @hookimpl
    def agent_turn_continuation(self) -> ContinuationDecision:
        return ContinuationDecision(action="stop", reason=f"budget spent for {KEY}")


async def test_a_plugins_retry_and_stop_reasons_are_logged_with_secrets_hidden() -> None:
    failing = Reply(error=ModelError("OVERLOADED", f"overloaded, key {KEY}"))
    model = ScriptedModel([failing, text("answered")])
    plugins: list[Any] = [QuotesTheError()]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        harness.add_secrets([KEY])
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(10):
            events = await run_turn(agent, "hi")
    (retry,) = [e.data for e in events if e.type == "step/retry"]
    assert retry["reason"] == "retrying after: overloaded, key ***"
    (end,) = [e.data for e in events if e.type == "turn/end"]
    assert (end["reason"], end["stopped"]) == ("completed", "budget spent for ***")
    assert all(KEY not in e.to_json("s") for e in events)
