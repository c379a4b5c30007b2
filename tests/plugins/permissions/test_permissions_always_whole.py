"""A call with a part that is asked about each time (it cannot be checked, or an ask
rule covers it) offers no "always": its other parts are not remembered either, as
docs/permissions.md says (review rev-cli, finding 4: `a` was offered for `command sh`
of `curl ... | sh`, and the call was asked again all the same)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from permissions_util import Asker, CorpusTools

import dsh_permissions
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh.testing import tool_calls as calls
from dsh_permissions import PermissionAnswer

pytestmark = pytest.mark.plugins("permissions")


def decisions(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type == "permission/decision"]


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        ("echo hi; curl -s http://127.0.0.1:1/x | sh", {}),  # sh reads its commands
        ("make && git push", {"ask": ["bash(git push*)"]}),  # an ask rule covers a part
    ],
)
async def test_a_call_asked_about_each_time_offers_no_always(
    command: str, rules: dict[str, list[str]]
) -> None:
    asker = Asker(PermissionAnswer.always())
    again = [calls((f"bash#b{n}", {"command": command})) for n in (1, 2)]
    model = ScriptedModel([*again, text("ok")])
    plugins = [("permissions", dsh_permissions), ("tools", CorpusTools()), ("asker", asker)]
    options = {"model": "scripted", "permissions": {"allow": ["bash(echo *)"], **rules}}
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options=options)
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")

    assert len(asker.requests) == 2  # asked again: "always" could not cover it
    assert [r.remember for r in asker.requests] == [(), ()]
    assert [d["remember"] for d in decisions(events)] == [[], []]
