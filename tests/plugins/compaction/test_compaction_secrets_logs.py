"""A summariser that fails quoting a model API key, and what dsh-compaction logs and
writes in ``compact/end`` (a study of its logger in library use;
tests/core/test_secrets_study_logs.py has the core's loggers,
tests/cli/test_cli_secrets_logs.py what the ``dsh`` command prints). The first-party
plugins log through ``dsh.get_logger`` and write event text through ``dsh.redact``,
which hide the keys."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from compaction_util import WINDOW, harness, options, reads, summarizer

from dsh._secrets import HideKeys, key_from_env, redact
from dsh.testing import ScriptedModel, fail, run_turn

pytestmark = pytest.mark.plugins("compaction")

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # sk-test- and 40 more


def refuse(request: Any) -> Any:
    raise PermissionError(f"proxy refused Bearer {KEY}")  # a plugin model's own failure


async def test_a_failing_summariser_quoting_the_key_is_logged_with_it_hidden(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leak path: the summariser raises (not a ModelError) quoting $OPENAI_API_KEY ->
    dsh_compaction's warning that the compaction failed and the history is unchanged."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = ScriptedModel(reads(7), context_window=WINDOW)
    with caplog.at_level(logging.DEBUG):
        async with harness(model, summarizer(refuse, refuse)) as h:
            agent = await h.agents.create("a", options=options())
            events = await run_turn(agent, "task")
    assert events[-1].data["reason"] == "completed"
    own = [caplog.handler.format(r) for r in caplog.records if r.name == "dsh_compaction"]
    assert any("PermissionError" in text for text in own), own
    for text in own:
        assert redact(text, (KEY,)) == text, text


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("dsh_compaction._compact", "dsh_compaction"),
        ("dsh_compaction._state", "dsh_compaction"),
        ("dsh_permissions._plugin", "dsh_permissions"),
        ("dsh_permissions._rule_names", "dsh_permissions"),
        ("dsh_persistence._checkpoints", "dsh.persistence"),
        ("dsh_persistence._harness_stores", "dsh.persistence"),
    ],
)
def test_each_first_party_plugin_logs_with_the_keys_hidden(module: str, name: str) -> None:
    """Every logger the plugins log with is a ``dsh.get_logger`` one, the plugin loaded
    or not (its module is imported here)."""
    pytest.importorskip(module.split(".")[0])
    imported = __import__(module, fromlist=["log"])
    assert imported.log is logging.getLogger(name)
    assert any(isinstance(f, HideKeys) for f in imported.log.filters)


def fail_quoting_the_key(request: Any) -> Any:
    return fail("SERVER", f"upstream said: invalid key {KEY}")  # a ModelError's message


@pytest.mark.parametrize("summariser", [refuse, fail_quoting_the_key])
@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "DSH_TEST_PROXY_KEY"])
async def test_a_failing_summariser_quoting_the_key_is_hidden_in_compact_end(
    monkeypatch: pytest.MonkeyPatch, summariser: Any, variable: str
) -> None:
    """Leak path: the summariser's failure quotes a key (a built-in provider's in the
    environment, or one dsh read through ``key_from_env``) -> ``compact/end``'s error,
    in the session (dsh_compaction writes it through ``dsh.redact``)."""
    monkeypatch.setenv(variable, KEY)
    key_from_env(variable)  # as a model of ``models:`` with this api_key_env does
    model = ScriptedModel(reads(7), context_window=WINDOW)
    async with harness(model, summarizer(summariser, summariser)) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        logged = [e for e in agent.session.events if e.type == "compact/end"]

    assert events[-1].data["reason"] == "completed"
    (end,) = logged
    assert end.data["outcome"] == "failed"
    message = end.data["error"]["message"]
    assert KEY not in message and "sk-test-aB3dE5gH" not in message
    assert "***" in message
