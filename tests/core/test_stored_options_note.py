"""A resume's options that a bad one among the session's stored options refuses: the
refusal names the session and how to go on (``dsh._stored_options``); an option the
caller gives itself is refused as before. (tests/cli/test_stored_options_off.py: the
same from the command line, with a plugin turned off when the session was stored.)"""

from __future__ import annotations

import time
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from dsh import DshError, hookimpl
from dsh.persistence import StoredSession
from dsh.testing import ScriptedModel, scripted_harness

BAD = {"model": "scripted", "strict": {"sise": 2}}
REFUSED = "agent 'a': option strict.sise: unknown key (expected one of: size); did you mean 'size'?"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = 1


class StrictSettings:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Strict)


def stored(session_id: str = "a-session-1", **meta: Any) -> StoredSession:
    return StoredSession(session_id, time.time(), [], {"options": dict(BAD), **meta})


async def refusal(session: StoredSession, config: str | None = None, **given: Any) -> str:
    plugins = [("strict", StrictSettings())]
    async with scripted_harness(
        ScriptedModel([]), plugins=plugins, load_entry_points=False, config_text=config
    ) as h:
        with pytest.raises(DshError) as caught:
            await h.agents.resume_stored("a", session, {**BAD, **given})
    return str(caught.value)


@pytest.mark.parametrize(
    ("config", "way"),
    [
        (None, "an agent 'a' under agents: in dsh.yml with options.strict replaces them"),
        (
            "agents:\n  - id: b\n  - id: a\n",
            "setting agents[1].options.strict in dsh.yml replaces them",
        ),
    ],
)
async def test_a_bad_stored_option_names_the_session_and_the_way_out(
    config: str | None, way: str
) -> None:
    said = await refusal(stored(), config)
    note = " (the 'strict' options stored with session a-session-1, not set in the configuration; "
    assert said == REFUSED + note + way + ")"


async def test_a_session_that_names_no_agent_is_told_how_to_go_on_without_them() -> None:
    said = await refusal(stored("kept"))
    assert said == REFUSED + (
        " (the 'strict' options stored with session kept, not set in the configuration; "
        "-p no:strict goes on without them)"
    )


async def test_the_callers_own_option_is_refused_without_the_note() -> None:
    assert await refusal(stored(), strict={"sise": 3}) == REFUSED
