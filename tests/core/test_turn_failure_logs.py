"""A turn that ends with an interception hook's failure, or with a model's unexpected
exception, leaves its traceback in a DEBUG record of a ``dsh`` logger (what ``dsh -v``
and pytest's caplog show), keys hidden; a failure dsh words itself, or a turn that
completes, logs nothing. A plugin model's own ``ModelError`` is named after the model."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from dsh import hookimpl
from dsh._secrets import redact
from dsh.errors import ModelError
from dsh.llm import ModelInfo, TextDelta
from dsh.messages import ModelRequest
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, fail, run_turn, scripted_harness, text

KEY = "sk-test-Qw3eR5tY7uI9oP1aS3dF5gH7jK9lZ1xC3vB5nM7q"
MODEL = {"model": "scripted"}


class Raising:
    """Raises in ``hook`` (one of the interception hooks that end a turn)."""

    def __init__(self, hook: str, error: Exception) -> None:
        def raise_it() -> None:
            raise error

        setattr(self, hook, hookimpl(specname=hook)(raise_it))


async def _turn(model: Any, *plugins: object, options: dict[str, str] = MODEL) -> SessionEvent:
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=options)
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
    return events[-1]


def _debug(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.DEBUG and r.name.startswith("dsh")]


@pytest.mark.parametrize("hook", ["agent_request", "agent_step_result", "agent_turn_continuation"])
async def test_a_turn_ended_by_a_raising_hook_logs_its_traceback_at_debug(
    caplog: pytest.LogCaptureFixture, hook: str
) -> None:
    with caplog.at_level(logging.DEBUG, logger="dsh"):
        end = await _turn(ScriptedModel([text("ok")]), Raising(hook, RuntimeError("it broke")))
    assert end.data["error"]["code"] == "HOOK"
    [record] = _debug(caplog)
    shown = caplog.handler.format(record)
    assert end.data["error"]["message"] in shown  # which turn, which plugin and hook
    assert "Traceback" in shown and "RuntimeError: it broke" in shown
    assert "raise error" in shown  # the plugin's own frame


class Boom:
    """A plugin model whose stream raises a plain exception after some text."""

    info = ModelInfo(name="boom", provider="bad")

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        yield TextDelta("half ")
        raise KeyError("choices")


async def test_a_models_unexpected_exception_logs_its_traceback_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="dsh"):
        end = await _turn(Boom(), options={"model": "boom"})
    assert end.data["error"] == {
        "code": "UNKNOWN",
        "message": "model 'boom' failed: KeyError: 'choices'",
    }
    [record] = _debug(caplog)
    shown = caplog.handler.format(record)
    assert "model 'boom' failed: KeyError: 'choices'" in shown
    assert 'raise KeyError("choices")' in shown  # the cause's frame, not only dsh's


async def test_a_completed_turn_and_a_worded_model_error_log_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="dsh"):
        assert (await _turn(ScriptedModel([text("ok")]))).data["reason"] == "completed"
        end = await _turn(ScriptedModel([fail("RATE_LIMIT", "slow down")]))
    assert end.data["error"]["code"] == "RATE_LIMIT"
    assert _debug(caplog) == []


async def test_a_key_in_the_failing_hooks_exception_is_hidden_in_the_record(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    error = PermissionError(f"proxy refused Bearer {KEY}")
    with caplog.at_level(logging.DEBUG, logger="dsh"):
        end = await _turn(ScriptedModel([text("ok")]), Raising("agent_request", error))
    assert "Bearer ***" in end.data["error"]["message"]
    [record] = _debug(caplog)
    shown = caplog.handler.format(record)
    assert "Traceback" in shown and "Bearer ***" in shown
    assert redact(shown, (KEY,)) == shown
    # an error tracker formatting exc_info itself would see the key: it is not kept
    assert record.exc_info is None


class Worded:
    """A plugin model failing with a ModelError of its own words (or none at all)."""

    info = ModelInfo(name="worded", provider="bad")

    def __init__(self, error: ModelError | None) -> None:
        self.error = error

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        yield TextDelta("half ")
        if self.error is not None:
            raise self.error


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (ModelError("SERVER", "the server broke"), "SERVER", "model 'worded': the server broke"),
        (None, "STREAM_CLOSED", "model 'worded': the model's stream ended without a finish"),
        # named already (as the built-in adapters name theirs): not named twice
        (ModelError("AUTH", "model 'worded': no key"), "AUTH", "model 'worded': no key"),
    ],
)
async def test_a_plugin_models_error_names_the_model(
    error: ModelError | None, code: str, message: str
) -> None:
    end = await _turn(Worded(error), options={"model": "worded"})
    assert end.data["error"] == {"code": code, "message": message}


class QuotaError(ModelError):
    """A plugin model's own error class, with its own attribute."""

    def __init__(self) -> None:
        super().__init__("RATE_LIMIT", "slow down", retry_after=0.01)
        self.quota = 42


def _slow(request: ModelRequest) -> Any:
    raise QuotaError()


async def test_hooks_see_a_models_own_error_and_only_the_turn_names_the_model() -> None:
    """The merged review: the name was put on by raising a new ModelError, so an
    ``agent_request_error`` hook lost the plugin's class and attributes."""
    seen: list[ModelError] = []
    model = ScriptedModel([_slow, text("ok"), _slow])

    class Retry:
        @hookimpl
        def agent_request_error(self, error: ModelError) -> Any:
            from dsh.messages import RequestErrorDecision

            seen.append(error)
            return RequestErrorDecision(action="retry" if len(seen) == 1 else "fail")

    async with scripted_harness(model, plugins=[Retry()], load_entry_points=False) as h:
        agent = await h.agents.create("a", options=MODEL)
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
            failed = await run_turn(agent, "again")
    assert [type(e) for e in seen] == [QuotaError, QuotaError]
    assert (seen[0].quota, seen[0].retry_after, seen[0].message) == (42, 0.01, "slow down")
    [retry] = [e.data for e in events if e.type == "step/retry"]
    assert retry["message"] == "slow down"  # the model's words, as the hook saw them
    assert events[-1].data["reason"] == "completed"
    assert failed[-1].data["error"]["message"] == "model 'scripted': slow down"
