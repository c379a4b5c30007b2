"""A ``ModelError`` carries what the turn's ``turn/end`` logs: its ``code`` must be a
str and its ``retry_after`` a number of seconds. Another value (an exception, an Enum,
a ``timedelta``) would enter the log unchecked, make every later flush fail (38) and the
live log differ from the stored one (42): ``ModelError`` refuses it, and the loop logs
a subclass's later-set value as a str (the code) or not at all (the wait)."""

from __future__ import annotations

import datetime
import enum
import math
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from loop_support import LIMIT, ends

from dsh import hookimpl
from dsh.errors import ModelError
from dsh.llm.base import Finish, ModelInfo, TextDelta
from dsh.testing import (
    ErrorRecorder,
    InMemoryPersistence,
    check_invariants,
    run_turn,
    scripted_harness,
)


class Code(enum.Enum):
    NOT_FOUND = "not_found"


@pytest.mark.parametrize(
    ("code", "named"),
    [(ValueError("404"), "ValueError"), (Code.NOT_FOUND, "Code"), (None, "NoneType")],
)
def test_b38_a_model_error_refuses_a_code_that_is_not_a_str(code: Any, named: str) -> None:
    """Behaviour 38: refused where it is made, naming the argument and its type."""
    with pytest.raises(TypeError) as refused:
        ModelError(code, "not found")
    assert str(refused.value).startswith(f"ModelError code must be a str, not {named}")


@pytest.mark.parametrize(
    ("wait", "named"),
    [
        (datetime.timedelta(seconds=3), "timedelta"),
        ("3", "str"),
        (True, "bool"),
        (math.nan, "float"),
        (math.inf, "float"),
        pytest.param(10**400, "int", id="int-too-large"),  # was an OverflowError
    ],
)
def test_b38_a_model_error_refuses_a_retry_after_that_is_not_seconds(wait: Any, named: str) -> None:
    """Behaviour 38: refused where it is made, naming the argument and its type."""
    with pytest.raises(TypeError) as refused:
        ModelError("RATE_LIMIT", "slow down", retry_after=wait)
    assert str(refused.value).startswith("ModelError retry_after must be")
    assert named in str(refused.value)


def test_a_model_error_takes_seconds_as_int_or_float() -> None:
    assert ModelError("RATE_LIMIT", "x", retry_after=3).retry_after == 3
    assert ModelError("RATE_LIMIT", "x", retry_after=0.5).retry_after == 0.5
    assert ModelError("RATE_LIMIT", "x").retry_after is None


class LateError(ModelError):
    """A plugin's subclass that sets its values after ``ModelError.__init__``."""

    def __init__(self) -> None:
        super().__init__("SERVER", "not found")
        self.code = Code.NOT_FOUND  # type: ignore[assignment]
        self.retry_after = datetime.timedelta(seconds=3)  # type: ignore[assignment]


class Failing:
    """A model failing its first call with ``LateError``, then answering."""

    info = ModelInfo("failing", "failing")

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        self.calls += 1
        if self.calls == 1:
            raise LateError
        yield TextDelta("fine")
        yield Finish("stop")


class Models:
    @hookimpl
    def register_models(self, register: Any) -> None:
        register(Failing())


async def test_b42_a_subclass_s_late_values_are_logged_as_json() -> None:
    """Behaviours 38 and 42: the code is logged as its str, the wait not at all; every
    flush stores the turns, and the stored log is the live one."""
    store, errors = InMemoryPersistence(), ErrorRecorder()
    plugins = [("models", Models()), ("store", store), ("errors", errors)]
    async with scripted_harness(plugins=plugins) as harness:
        agent = await harness.agents.create("a", options={"model": "failing"})
        with anyio.fail_after(LIMIT):
            first = await run_turn(agent, "one")
            second = await run_turn(agent, "two")
    (end,) = [e.data for e in first if e.type == "turn/end"]
    assert end["error"]["code"] == "Code.NOT_FOUND"
    assert "retry_after" not in end["error"]
    assert ends(second) == [(2, "completed")]
    assert errors.errors == []
    stored = store.stored[agent.session.id].events
    assert [(e.type, e.data) for e in stored] == [(e.type, e.data) for e in agent.session.events]
    assert check_invariants(agent.session.events) == []


class Retrying:
    @hookimpl
    def agent_request_error(self, agent: Any, request: Any, error: Any, decision: Any) -> Any:
        from dsh.messages import RequestErrorDecision

        return RequestErrorDecision(action="retry")


async def test_b42_a_retried_subclass_s_late_code_is_logged_as_json() -> None:
    """The ``step/retry`` event of a retried call logged the subclass's code as it was
    (an Enum): every later flush failed, or the stored log differed from the live one."""
    store, errors = InMemoryPersistence(), ErrorRecorder()
    plugins = [("models", Models()), ("retry", Retrying()), ("store", store), ("errors", errors)]
    async with scripted_harness(plugins=plugins) as harness:
        agent = await harness.agents.create("a", options={"model": "failing"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "one")
    (retry,) = [e.data for e in events if e.type == "step/retry"]
    assert retry["code"] == "Code.NOT_FOUND"
    assert ends(events) == [(1, "completed")]
    assert errors.errors == []
    stored = store.stored[agent.session.id].events
    assert [(e.type, e.data) for e in stored] == [(e.type, e.data) for e in agent.session.events]
