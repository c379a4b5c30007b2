"""A ``tools_execute`` impl's ``ToolResult`` answers the call it was returned for: its
``call_id`` is the call's, whatever it says (hooks.md, ``tools_execute``), so a result
a plugin stored for an earlier call can be returned as it is."""

from __future__ import annotations

from typing import Any

from dsh import ToolResult, hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, tool_calls


class Cache:
    """Answers every call with the result it stored for an earlier one."""

    stored = ToolResult(call_id="call-from-yesterday", content="cached")

    @hookimpl(tryfirst=True)
    def tools_execute(self, call: Any) -> ToolResult:
        return self.stored


async def test_a_result_with_another_call_id_answers_the_call_it_was_returned_for() -> None:
    model = ScriptedModel([tool_calls(("read#c1", {"path": "a"})), "done"])
    async with scripted_harness(model, plugins=[Cache()], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "go")
    [result] = [e.data for e in agent.session.events if e.type == "tool/result"]
    assert (result["call_id"], result["content"]) == ("c1", "cached")
    # the model's next request pairs the result with its call
    [answer] = [m for m in model.requests[1].messages if m.role == "tool"]
    assert (answer.call_id, answer.content) == ("c1", "cached")
    model.assert_complete()
