"""chat's ``/resume`` (``dsh._cli_resume``) when the session asked for is refused and
the chat's own cannot be taken back either: another process stored and claimed it
between the dispose and the take-back (the merged review: the error went out of
``/resume`` with the chat's agent disposed). The chat goes on in a new session."""

from __future__ import annotations

import io
from typing import Any

import pytest

from dsh import DshError
from dsh._cli_resume import resume
from dsh._render import Renderer
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text


async def test_the_chat_goes_on_in_a_new_session_when_its_own_is_taken(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedModel([text("stored"), text("still here")])
    async with scripted_harness(model, plugins=[("mem", InMemoryPersistence())]) as h:
        other = await h.agents.create("other", options={"model": "scripted"})
        await run_turn(other, "keep me")
        wanted = other.session.id
        await other.dispose()
        agent = await h.agents.create("main", options={"model": "scripted"})
        own = agent.session.id
        agents: Any = h.agents
        real_create = agents.create

        async def refused(*args: Any, **kwargs: Any) -> Any:
            raise DshError("in use: another process is continuing it")

        async def create(agent_id: str, session_id: str | None = None, **kwargs: Any) -> Any:
            if session_id is not None:  # the chat's own id: taken meanwhile
                raise DshError(f"session {session_id!r} is stored already")
            return await real_create(agent_id, **kwargs)

        monkeypatch.setattr(agents, "resume_stored", refused)
        monkeypatch.setattr(agents, "resume", refused)
        monkeypatch.setattr(agents, "create", create)
        renderer = Renderer(io.StringIO(), io.StringIO())
        failures: list[str] = []
        resumed = await resume(h, agent, wanted, renderer, failures.append)
        assert resumed.agent.status != "disposed" and resumed.session.id not in (own, wanted)
        assert renderer.session_id == resumed.session.id
        assert failures == [
            "  /resume: in use: another process is continuing it; this chat goes on"
        ]
        assert f"dsh: new session {resumed.session.id}" in capsys.readouterr().err
        assert (await run_turn(resumed, "hi"))[-1].data["reason"] == "completed"
