"""A plugin's ``SecretStr`` value in an agent's options (as docs/hooks.md recommends)
is stored in the session's meta as ``***`` without a warning: the warning ("held a
secret dsh holds ... stored with the session with *** in its place") is for a key
pasted into options by mistake, and it was printed on every ``dsh run`` for the
recommended use."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from secrets_support import DeclaresToken

from dsh import hookimpl
from dsh.harness import Harness
from dsh.testing import ScriptedModel

SECRET = "tok-Dec1ared-0ptions-42"


class Declares(DeclaresToken):
    @hookimpl
    def register_models(self, register: Any) -> None:
        register(ScriptedModel([], name="s"))


async def created_meta(options: dict[str, Any], caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level(logging.WARNING)
    text = f"tok: {{token: {SECRET}}}\n"  # declared secret as dsh.yml is validated
    async with Harness(
        plugins=[("tok", Declares())], load_entry_points=False, config_text=text
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "s", **options})
        return agent.agent.session.meta


async def test_a_declared_secret_in_options_is_hidden_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    meta = await created_meta({"tok": {"token": SECRET}}, caplog)
    assert meta["options"]["tok"] == {"token": "***"}
    assert [r.getMessage() for r in caplog.records if "held a secret" in r.getMessage()] == []


async def test_an_undeclared_secret_beside_it_is_still_warned_about(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-pasted-by-mistake-1234567"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    meta = await created_meta({"tok": {"token": SECRET}, "note": key}, caplog)
    assert meta["options"] == {"model": "s", "tok": {"token": "***"}, "note": "***"}
    (said,) = [r.getMessage() for r in caplog.records if "held a secret" in r.getMessage()]
    assert said.startswith("agent 'a': option 'note' held a secret dsh holds")


async def test_a_resume_in_code_without_options_refuses_the_stored_placeholder(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The session stores the token as ***: a resume given no options ran the plugin
    with *** as its token, saying nothing."""
    from dsh import DshError
    from dsh.testing import InMemoryPersistence

    text = f"tok: {{token: {SECRET}}}\n"
    store = InMemoryPersistence()
    plugins = [("tok", Declares()), ("persistence", store)]
    async with Harness(plugins=plugins, load_entry_points=False, config_text=text) as harness:
        agent = await harness.agents.create("a", options={"model": "s", "tok": {"token": SECRET}})
        session_id = agent.agent.session.id
        await agent.dispose()
        with pytest.raises(DshError) as refused:
            await harness.agents.resume("b", session_id)
        assert str(refused.value) == (
            f"agent 'b': option 'tok' holds a secret (a SecretStr setting) that was stored "
            f"with session {session_id} as *** (dsh never stores a secret it holds): pass "
            "options= with it to resume"
        )
        again = await harness.agents.resume("b", session_id, options={"model": "s"})
        await again.dispose()
