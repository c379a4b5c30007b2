"""What the registry checks before a start is reserved, and what it refuses once the
harness leaves: a resume's options and workspace are checked before its id and session
are (as ``create`` checks them), so the error names what is wrong with the call itself;
``load_stored`` is refused once the harness is leaving, and one in flight is awaited by
the harness's exit before its plugins close their stores.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from loop_support import LIMIT

from dsh import DshError
from dsh.harness import Harness
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness

OPTIONS = {"model": "scripted"}
MISSING = "/nonexistent/workspace"


async def live_and_stored(h: Harness) -> tuple[Any, Any]:
    agent = await h.agents.create("a", options=OPTIONS)
    await run_turn(agent, "hi")
    return agent, await h.agents.load_stored(agent.session.id)


@pytest.mark.parametrize("how", ["resume", "resume_stored"])
async def test_a_resume_with_a_bad_workspace_says_so_before_its_id_or_session(how: str) -> None:
    store = InMemoryPersistence()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["one"]), plugins=[store], load_entry_points=False
        ) as h:
            agent, stored = await live_and_stored(h)
            for agent_id in ("a", "b"):  # the id taken; the session live in the harness
                if how == "resume":
                    start = h.agents.resume(agent_id, agent.session.id, workspace=MISSING)
                else:
                    start = h.agents.resume_stored(agent_id, stored, workspace=MISSING)
                with pytest.raises(DshError) as refused:
                    await start
                assert str(refused.value) == (
                    f"agent {agent_id!r}: workspace {MISSING!r} is not a directory"
                )


@pytest.mark.parametrize("how", ["resume", "resume_stored", "create"])
async def test_a_start_with_a_misspelt_option_says_so_before_its_id(how: str) -> None:
    store = InMemoryPersistence()
    options = {**OPTIONS, "max_stepz": 3}
    with anyio.fail_after(LIMIT):
        async with scripted_harness(
            ScriptedModel(["one"]), plugins=[store], load_entry_points=False
        ) as h:
            agent, stored = await live_and_stored(h)
            if how == "resume":
                start = h.agents.resume("a", agent.session.id, options=options)
            elif how == "resume_stored":
                start = h.agents.resume_stored("a", stored, options=options)
            else:
                start = h.agents.create("a", options=options)
            with pytest.raises(DshError, match="max_stepz") as refused:
                await start
            assert "already exists" not in str(refused.value)
