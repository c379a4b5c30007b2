"""A secret dsh holds (a model API key, a plugin's secret) typed into a prompt or a steer
(``dsh run "why does curl -H 'Authorization: Bearer $OPENAI_API_KEY' fail?"``) is hidden
before the text enters the log: the ``user/message`` and ``steering/message`` events
(the session file, its title, ``dsh sessions list``) and the model's request say
``***``, and one warning, naming no key, says so.

Before: the prompt was logged, stored and sent as written."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from dsh import hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text

KEY = "sk-typed-0123456789abcdefXYZ"
OTHER = "plugin-secret-5e0c7d21a9"


def texts(model: ScriptedModel) -> list[list[str]]:
    return [[str(m.content) for m in request.messages] for request in model.requests]


class SteerOnce:
    """Steers the running turn with a secret on its first request."""

    def __init__(self) -> None:
        self.done = False

    @hookimpl
    def agent_request(self, agent: Any, request: Any, turn: int, step: int) -> None:
        if not self.done:
            self.done = True
            agent.steer(f"also try {OTHER} and the key {KEY[:20]}")


async def test_a_secret_in_a_prompt_or_a_steer_is_logged_and_sent_hidden(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel([text("one"), text("two")])
    async with scripted_harness(model, plugins=[SteerOnce()], load_entry_points=False) as harness:
        harness.add_secrets([KEY, OTHER])
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with caplog.at_level(logging.WARNING), anyio.fail_after(10):
            events = await run_turn(agent, f"why does Bearer {KEY} fail?")
    said = [(e.type, e.data["content"]) for e in events if "content" in e.data]
    assert said == [
        ("user/message", "why does Bearer *** fail?"),
        ("steering/message", "also try *** and the key ***"),
    ]
    sent = texts(model)[-1]  # the prompt, the first answer, the steer
    assert (sent[0], sent[-1]) == ("why does Bearer *** fail?", "also try *** and the key ***")
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 2 and all("a secret dsh holds" in line for line in warned)
    assert all(KEY[:16] not in line and OTHER not in line for line in warned)


async def test_a_prompt_without_a_secret_is_logged_as_written_with_no_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel([text("ok")])
    async with scripted_harness(model, load_entry_points=False) as harness:
        harness.add_secrets([KEY])
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with caplog.at_level(logging.WARNING), anyio.fail_after(10):
            events = await run_turn(agent, "the key is in $OPENAI_API_KEY, sk-typed-0")
    assert events[1].data == {"content": "the key is in $OPENAI_API_KEY, sk-typed-0"}
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
