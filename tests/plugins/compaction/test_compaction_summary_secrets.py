"""Secrets and the summariser. The default prompt asks for file paths, commands and
settings copied exactly, but never a secret's value: a password the agent read from a
file, which dsh does not know, would otherwise be carried into every later summary; the
summary says one was there and where to find it. A secret dsh knows (a model API key, one
a plugin added) is hidden (``***``) in the transcript the summariser model is sent, also
when the history took it in before dsh knew it (a session resumed from before, a secret
added since): the summariser may be another provider's model.

Was: "Copy them exactly" with no word on secrets; and the transcript went as the history
held it."""

from __future__ import annotations

import pytest
from compaction_util import WINDOW, events_of, harness, options, reads, summarizer

from dsh.testing import ScriptedModel, run_turn
from dsh_compaction import DEFAULT_PROMPT

pytestmark = pytest.mark.plugins("compaction")

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"


def test_the_default_prompt_keeps_secrets_out_of_the_summary() -> None:
    words = " ".join(DEFAULT_PROMPT.split())
    assert "Copy them exactly" in words  # paths, commands, identifiers: verbatim
    assert "Never copy a secret" in words
    for kind in ("password", "API key", "token", "private key"):
        assert kind in words
    assert "where to find it" in words  # the agent can read it again when it needs it


async def test_a_secret_dsh_holds_is_hidden_in_the_summary_request() -> None:
    model = ScriptedModel(["noted", *reads(5)], context_window=WINDOW)
    summary = summarizer("## Progress\nlogged in; read f0.py to f4.py")
    async with harness(
        model,
        summary,
    ) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, f"the staging password is {KEY}; remember it")
        assert KEY in str(agent.session.history)  # dsh did not know it then
        h.add_secrets([KEY])  # now it does (a plugin's, a key set since)
        compacted = events_of(await run_turn(agent, "read the files"), "compact/summary")
    assert compacted
    assert summary.requests
    for request in summary.requests:
        sent = str(request.messages)
        assert KEY not in sent
        assert "the staging password is ***" in sent
