"""``api_key`` and ``api_key_env`` outside an entry of ``models:`` (the top of dsh.yml,
an agent's options, options given in code) are refused saying where they go; a session
an older dsh stored with one is continued without it, with a warning."""

from __future__ import annotations

import logging

import pytest

from dsh import DshError
from dsh.config import ConfigError, load_config
from dsh.harness import Harness
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text

SECRET = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    ("text_", "path"),
    [
        ("api_key_env: OPENAI_API_KEY\n", "api_key_env"),
        (
            "agents:\n  - id: main\n    options: {api_key_env: OPENAI_API_KEY}\n",
            "agents[0].options.api_key_env",
        ),
    ],
)
def test_api_key_env_outside_a_models_entry_is_refused_naming_where_it_goes(
    text_: str, path: str
) -> None:
    """At the top it was taken for the section of a plugin not installed; in an agent's
    options it was accepted and read by nothing: the key stayed unset without a word."""
    with pytest.raises(ConfigError) as caught:
        load_config(text=text_)
    assert caught.value.path == path
    assert "models: {NAME: {api_key_env:" in caught.value.reason


async def test_api_key_env_given_in_code_says_where_it_goes() -> None:
    """As in the file (api_key given in code: tests/docs_audit/test_docs_audit_config.py)."""
    options = {"model": "scripted", "api_key_env": "OPENAI_API_KEY"}
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError) as caught:
            await harness.agents.create("a", options=options)
    assert "option 'api_key_env'" in str(caught.value)
    assert "models: {NAME:" in str(caught.value)


async def stored_with(harness: Harness, store: InMemoryPersistence, key: str) -> str:
    """A session stored by an agent, its stored options given ``key`` afterwards, as an
    older dsh (which took it) stored them."""
    agent = await harness.agents.create("a", options={"model": "scripted"})
    await run_turn(agent, "hi")
    session_id: str = agent.session.id
    await agent.dispose()
    store.stored[session_id].meta["options"][key] = SECRET
    return session_id


@pytest.mark.parametrize("key", ["api_key", "api_key_env"])
async def test_a_session_stored_with_a_key_option_is_continued_without_it(
    key: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Refused as an option now, the stored one would have made the session impossible
    to continue (from the command line: its stored options go in again, and dsh.yml
    cannot override what it refuses). Both ways of continuing drop it with a warning
    naming the session; the warning never repeats the key."""
    from dsh._cli_agent import resume_options

    store = InMemoryPersistence()
    model = ScriptedModel([text("one"), text("two"), text("three")])
    async with scripted_harness(model, plugins=[("mem", store)], load_entry_points=False) as h:
        session_id = await stored_with(h, store, key)
        with caplog.at_level(logging.WARNING):
            resumed = await h.agents.resume("b", session_id)  # its stored options
        assert key not in resumed.agent.options
        await run_turn(resumed, "again")
        await resumed.dispose()
        # the command line's way: the stored options under the config's
        stored = await h.agents.load_stored(session_id)
        options = resume_options(h, stored, "scripted")
        assert key not in options
        again = await h.agents.resume_stored("c", stored, options)
        await run_turn(again, "and again")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(session_id in w and key in w for w in warnings), warnings
    assert not any(SECRET in w for w in warnings)
