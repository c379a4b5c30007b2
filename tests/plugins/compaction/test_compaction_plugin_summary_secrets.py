"""A summary a ``compaction_summarize`` plugin writes is cleared of the secrets dsh holds
(a model API key it quotes) before it is logged in ``compact/summary`` and sent to the
model, as a tool result is (core ``_steps``); a warning says so, naming no key.

Before: the model-written summary had them hidden, a plugin's went to the session file,
``dsh sessions show`` and every later request as written.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest
from compaction_util import WINDOW, events_of, harness, options, reads

from dsh import Message, hookimpl
from dsh.testing import ScriptedModel, check_invariants, run_turn

pytestmark = pytest.mark.plugins("compaction")

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # sk-test- and 40 more


class Quoting:
    @hookimpl(optionalhook=True)
    def compaction_summarize(
        self, messages: Sequence[Message], previous_summary: str | None
    ) -> str:
        return f"## Progress\nread the files; the service used the key {KEY} to log in"


async def test_a_plugin_summary_quoting_a_key_is_logged_and_sent_with_it_hidden(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = ScriptedModel(reads(5), context_window=WINDOW)
    with caplog.at_level(logging.WARNING):
        async with harness(model, extra=[("quoting", Quoting())]) as h:
            agent = await h.agents.create("a", options=options())
            assert KEY in agent.agent.secrets
            events = await run_turn(agent, "task")
            history = list(agent.session.history)
            assert check_invariants(agent.session.events) == []

    (written,) = events_of(events, "compact/summary")
    assert written.data["source"] == "plugin"
    assert KEY not in written.data["summary"] and "***" in written.data["summary"]
    assert all(KEY not in str(m) for m in history)
    assert all(KEY not in str(r.messages) for r in model.requests)
    warned = [r.getMessage() for r in caplog.records if r.name == "dsh_compaction"]
    assert any("'quoting'" in w and "secret" in w for w in warned), warned
    assert all(KEY not in w for w in warned)
