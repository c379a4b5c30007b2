"""Where a model API key can reach a log record (a study): Python logging with every
logger at DEBUG, while a tool, a plugin, a model or a session flush fails with the key
in its exception's text or in its traceback (a chained cause). A record "shows" the key
when ``dsh._secrets.redact`` would hide something in what a handler prints (message and
traceback) or in the traceback of the exception it still carries. Each test follows one
path; a test marked xfail shows a leak that exists today (see reason). The HTTP
adapters' retry warnings are in tests/core/llm/test_secrets_study_errors.py; what the
``dsh`` command prints is in tests/cli/test_cli_secrets_logs.py."""

from __future__ import annotations

import logging
import traceback
from typing import Any

import anyio
import pytest
from loop_support import Models

from dsh import hookimpl
from dsh._secrets import redact
from dsh._steps import StepRunner
from dsh.harness import Harness
from dsh.messages import ModelRequest
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh.tools import tool

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # sk-test- and 40 more
#: Only in one harness's ``env``: no other test has dsh read it (dsh hides every key
#: it has read in the process, whichever harness read it).
GW_KEY = "gw-test-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe"
GATEWAY = (
    "models:\n  gw: {provider: openai-compatible, model: m, api_key_env: GW_KEY,\n"
    "       base_url: 'http://127.0.0.1:9/v1'}\n"
)


def shows(text: str) -> bool:
    return redact(text, (KEY, GW_KEY)) != text


def printed(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Each record as a handler prints it, and as one that formats ``exc_info`` itself
    (an error tracker, say) would see its exception."""
    out = []
    for record in caplog.records:
        out.append(caplog.handler.format(record))
        if record.exc_info and record.exc_info[1] is not None:
            out.append("".join(traceback.format_exception(record.exc_info[1])))
    return out


def hidden_in(caplog: pytest.LogCaptureFixture, logger: str) -> None:
    """Some record of ``logger`` quoted the key, as ``***``, and no record shows it."""
    own = [caplog.handler.format(r) for r in caplog.records if r.name == logger]
    assert any("***" in shown for shown in own), own
    for shown in printed(caplog):
        assert not shows(shown), shown


@tool
def fetch(url: str) -> str:
    "Fetch a page with the gateway's key."
    raise RuntimeError(f"401 from {url} for Bearer {KEY}")


@tool
def upload(name: str) -> str:
    "Upload a file with the gateway's key."
    try:
        raise ValueError(f"illegal header value 'Bearer {GW_KEY}\\r'")
    except ValueError as exc:  # the model reads the outer message; the log has both
        raise RuntimeError("the upload was refused") from exc


@tool
def divide(by: int) -> str:
    "Divide one by a number."
    return str(1 / by)


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        for each in (fetch, upload, divide):
            register(each)


async def turn(harness: Harness) -> list[Any]:
    agent = await harness.agents.create("a", options={"model": "scripted"})
    with anyio.fail_after(30):
        return await run_turn(agent, "go")


# -- tools ---------------------------------------------------------------------------------


async def test_a_failing_tools_exception_text_is_hidden_in_the_debug_record(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leak path: a tool raises with $OPENAI_API_KEY in its message -> the DEBUG record
    of dsh.tools with its traceback (core/src/dsh/tools.py:263)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = ScriptedModel([tool_calls(("fetch", {"url": "https://x.example"})), text("ok")])
    with caplog.at_level(logging.DEBUG):
        async with scripted_harness(model, plugins=[Tools()], load_entry_points=False) as h:
            events = await turn(h)
    (result,) = [e.data for e in events if e.type == "tool/result"]
    assert result["is_error"] and "Bearer ***" in result["content"]  # hidden there already
    hidden_in(caplog, "dsh.tools")


async def test_a_key_in_a_tools_chained_cause_is_hidden_for_a_harness_given_its_env(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Leak path: a tool's exception whose cause quotes the key of ``api_key_env`` in
    the harness's own ``env`` (not the process's) -> the traceback of dsh.tools' DEBUG
    record; the tool result names the outer exception only."""
    model = ScriptedModel([tool_calls(("upload", {"name": "a.txt"})), text("ok")])
    harness = Harness(
        plugins=[("tools", Tools()), ("models", Models(model))],
        load_entry_points=False,
        config_text=GATEWAY,
        env={"GW_KEY": GW_KEY},
    )
    with caplog.at_level(logging.DEBUG):
        async with harness as h:
            events = await turn(h)
    (result,) = [e.data for e in events if e.type == "tool/result"]
    assert result["content"].endswith("RuntimeError: the upload was refused")
    hidden_in(caplog, "dsh.tools")


async def test_records_without_a_key_keep_their_arguments_and_exception(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hiding touches only a record that shows a key: a tool failing for another reason
    keeps its format arguments and ``exc_info`` for the handlers that use them."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = ScriptedModel([tool_calls(("divide", {"by": 0})), text("ok")])
    with caplog.at_level(logging.DEBUG, logger="dsh.tools"):
        async with scripted_harness(model, plugins=[Tools()], load_entry_points=False) as h:
            await turn(h)
    (record,) = [r for r in caplog.records if r.name == "dsh.tools"]
    assert isinstance(record.args, tuple) and record.args[0] == "divide"
    assert record.exc_info is not None and record.exc_info[0] is ZeroDivisionError


# -- plugins, models and the session's store -----------------------------------------------


class Watcher:
    """A plugin that reports each status to a service, which refuses its key."""

    @hookimpl
    def agent_status(self, agent: Any, status: Any) -> None:
        raise ConnectionError(f"status service refused token {KEY}")


async def test_a_plugins_contained_failure_is_logged_with_the_key_hidden(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leak path: a plugin's notify hook raises with the key in its message; the
    dispatcher contains it and reports it -> dsh.plugins' ERROR record, its message
    (the HookError quotes the cause) and its traceback (core/src/dsh/_calling.py:89)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = ScriptedModel([text("ok")])
    with caplog.at_level(logging.DEBUG):
        async with scripted_harness(model, plugins=[Watcher()], load_entry_points=False) as h:
            events = await turn(h)
    assert events[-1].data["reason"] == "completed"
    hidden_in(caplog, "dsh.plugins")
    assert any("refused token ***" in r.getMessage() for r in caplog.records)


async def test_a_turns_internal_failure_is_logged_with_the_key_hidden(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leak path: a turn fails on an exception no step turns into an error (a bug)
    whose text quotes the key -> dsh.loop's "turn failed" record with its traceback
    (core/src/dsh/_steps.py, StepRunner.run_turn)."""
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)

    async def broken(self: StepRunner, turn: Any) -> None:
        raise KeyError(f"no route for Bearer {KEY}")

    monkeypatch.setattr(StepRunner, "_steps", broken)
    with caplog.at_level(logging.DEBUG):
        async with scripted_harness(ScriptedModel([]), load_entry_points=False) as h:
            events = await turn(h)
    assert events[-1].data["error"]["code"] == "INTERNAL"
    assert not shows(events[-1].data["error"]["message"])  # nor in the session
    hidden_in(caplog, "dsh.loop")


def refuse(request: ModelRequest) -> Any:
    raise PermissionError(f"proxy refused Bearer {KEY}")  # a plugin model's own failure


async def test_a_models_unexpected_failure_stays_out_of_the_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Leak path: a plugin model raises quoting the key -> turn/end's error message."""
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    async with scripted_harness(ScriptedModel([refuse]), load_entry_points=False) as h:
        events = await turn(h)
    error = events[-1].data["error"]
    assert error["code"] == "UNKNOWN"
    assert not shows(error["message"])


class FailingStore:
    """A session_flush impl whose store rejects the write, quoting the key."""

    @hookimpl
    async def session_flush(self, session: Any) -> None:
        raise OSError(f"store rejected credentials {KEY}")


async def test_a_failing_session_flush_is_logged_with_the_key_hidden(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leak path: ``session_flush`` fails with the key in its message -> dsh.loop's
    "session flush failed" record (core/src/dsh/loop.py:282)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = ScriptedModel([text("ok")])
    with caplog.at_level(logging.DEBUG):
        async with scripted_harness(model, plugins=[FailingStore()], load_entry_points=False) as h:
            await turn(h)
    hidden_in(caplog, "dsh.loop")


def test_a_plugins_own_logger_from_dsh_get_logger_hides_the_keys(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``dsh.get_logger``: what a third-party plugin logs with, the first-party ones too."""
    import dsh

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    log = dsh.get_logger("dsh_test_plugin")
    with caplog.at_level(logging.DEBUG):
        try:
            raise ConnectionError(f"gateway said no to {KEY}")
        except ConnectionError:
            log.exception("upload failed: %s", f"Bearer {KEY}")
    hidden_in(caplog, "dsh_test_plugin")
    assert "upload failed: Bearer ***" in caplog.text
