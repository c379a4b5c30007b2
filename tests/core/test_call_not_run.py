"""``ReactLoopAgent.call_not_run``: a ``tools_execute`` impl that decides before a call
runs (a permission question) and is cancelled says the call did not run, so the turn's
closing result says "not run" instead of "it may have run" (found by the chat study:
Ctrl-C at a permission question told the model a never-approved command may have run)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from dsh import hookimpl
from dsh.testing import ScriptedModel, scripted_harness, tool_calls


class Asking:
    """Waits for an answer that never comes; says so when cancelled (or does not)."""

    def __init__(self, tell: str | None) -> None:
        self.tell = tell
        self.asked = anyio.Event()

    @hookimpl(tryfirst=True)
    async def tools_execute(self, agent: Any, call: Any) -> None:
        self.asked.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            if self.tell is not None:
                agent.call_not_run(call.id if self.tell == "own" else "another-call")
            raise


MAY_HAVE_RUN = (
    "interrupted: the turn was aborted while this call was being handled; it may have run"
)


@pytest.mark.parametrize(
    ("tell", "said"),
    [
        ("own", "not run: the turn was aborted before this call ran"),
        ("other", MAY_HAVE_RUN),  # about another call: this one may still have run
        (None, MAY_HAVE_RUN),
    ],
)
async def test_a_call_cancelled_while_an_impl_decided_is_said_not_to_have_run(
    tell: str | None, said: str
) -> None:
    asking = Asking(tell)
    model = ScriptedModel([tool_calls(("echo", {"text": "x"}))])
    async with scripted_harness(model, plugins=[("asking", asking)]) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        agent.send("go")
        with anyio.fail_after(10):
            await asking.asked.wait()
            agent.abort()
            await agent.when_idle()
        (result,) = [e.data for e in agent.session.events if e.type == "tool/result"]
    assert result["content"] == said
