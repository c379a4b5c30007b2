"""What ``ScriptedModel`` lets a test fail on (from a third-party plugin author's review):
requests past the end of the script, an exception raised in a callable entry, and an
entry that is no answer.

Before: ``assert_complete()`` passed when the model was asked more times than its script
had entries (the extra request ends the turn with SCRIPT_EXHAUSTED, ``run_turn``
returns normally); an ``assert`` in a callable entry became a model error and the test
passed; ``ScriptedModel([42])`` and a callable returning None failed at the request with
``AttributeError: 'int' object has no attribute 'error'``.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh import ContinuationDecision, hookimpl
from dsh.errors import ModelError
from dsh.llm.base import Chunk
from dsh.messages import ModelRequest
from dsh.testing import (
    ScriptedModel,
    fail,
    hang,
    max_tokens,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)


async def streamed(model: ScriptedModel) -> list[Chunk]:
    return [chunk async for chunk in model.stream(ModelRequest())]


class OneMoreStep:
    """A buggy plugin: the agent asks the model once more than the test expects."""

    @hookimpl
    def agent_turn_continuation(self, decision: ContinuationDecision, step: int) -> Any:
        return ContinuationDecision(action="continue") if step == 1 else None


async def test_assert_complete_fails_when_the_model_was_asked_past_its_script() -> None:
    model = ScriptedModel(["ok"])
    async with scripted_harness(model, plugins=[OneMoreStep()], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    assert events[-1].data["error"]["code"] == "SCRIPT_EXHAUSTED"  # run_turn did not raise
    with pytest.raises(AssertionError) as failed:
        model.assert_complete()
    assert str(failed.value) == "scripted model 'scripted': 2 requests for a script of 1 entry"


async def test_requests_past_the_script_are_counted_even_after_requests_is_cleared() -> None:
    model = ScriptedModel(["a", "b"], name="m")
    await streamed(model)
    await streamed(model)
    model.requests.clear()  # as a stress test does between rounds
    for number in (3, 4):
        with pytest.raises(ModelError, match=rf"request #{number} \(script has 2 entries\)"):
            await streamed(model)
    with pytest.raises(AssertionError, match=r"'m': 4 requests for a script of 2 entries$"):
        model.assert_complete()


async def test_an_exception_in_a_callable_entry_fails_assert_complete() -> None:
    def check(request: ModelRequest) -> str:
        assert "STAMP" in request.system, "the plugin did not stamp the request"
        return "ok"

    def broken(request: ModelRequest) -> str:
        raise KeyError("later")

    model = ScriptedModel(["first", check, broken])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
        events = await run_turn(agent, "again")
        await run_turn(agent, "once more")
    assert "the plugin did not stamp the request" in events[-1].data["error"]["message"]
    with pytest.raises(AssertionError) as failed:
        model.assert_complete()
    assert str(failed.value).startswith(  # pytest adds its explanation of the assert
        "scripted model 'scripted': script entry #2 (check) raised AssertionError: "
        "the plugin did not stamp the request"
    )
    cause = failed.value.__cause__
    assert isinstance(cause, AssertionError)  # the first one, chained
    assert str(cause).startswith("the plugin did not stamp the request")


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (42, "int (42)"),
        (None, "NoneType (None)"),
        (["a", "b"], "list (['a', 'b'])"),
        ({"text": "x"}, "dict ({'text': 'x'})"),
    ],
    ids=["int", "none", "list", "dict"],
)
def test_an_entry_that_is_no_answer_is_refused_when_the_model_is_made(
    entry: object, said: str
) -> None:
    with pytest.raises(TypeError) as refused:
        ScriptedModel(["fine", entry])  # type: ignore[list-item]
    assert str(refused.value) == (
        f"ScriptedModel's script entry #2 is {said}: an entry is a Reply, a str, "
        "or a function of the request returning a Reply or a str"
    )


def test_extend_refuses_an_entry_that_is_no_answer() -> None:
    model = ScriptedModel(["a"])
    with pytest.raises(TypeError, match="entry #3 is int"):
        model.extend("b", 3)  # type: ignore[arg-type]
    assert model.script == ["a"]


@pytest.mark.parametrize(
    ("returned", "said"),
    [(None, "NoneType"), (["a", "b"], "list"), ({"text": "x"}, "dict"), (7, "int")],
    ids=["none", "list", "dict", "int"],
)
async def test_a_callable_returning_no_answer_fails_the_step_and_assert_complete(
    returned: object, said: str
) -> None:
    model = ScriptedModel([text("a"), lambda request: returned])  # type: ignore[list-item,return-value]
    await streamed(model)
    with pytest.raises(TypeError) as refused:
        await streamed(model)
    assert str(refused.value) == (
        f"scripted model 'scripted': script entry #2 (<lambda>) returned {said}; "
        "return a Reply or a str"
    )
    with pytest.raises(AssertionError) as failed:
        model.assert_complete()
    assert str(failed.value) == str(refused.value)
    assert failed.value.__cause__ is refused.value


@pytest.mark.parametrize("helper", [text, tool_calls, max_tokens, fail, hang])
def test_an_answer_maker_given_uncalled_is_refused_saying_to_call_it(helper: Any) -> None:
    """``ScriptedModel([text])`` was taken for a function of the request: the step
    failed "the model streamed text that is not a str: ModelRequest(...)" (``fail``
    logged a whole request as the error's code) and ``assert_complete()`` passed."""
    name = helper.__name__
    with pytest.raises(TypeError) as caught:
        ScriptedModel(["first", helper])
    assert str(caught.value) == (
        f"ScriptedModel's script entry #2 is the function {name} itself: call it for an "
        f"answer ({name}(...))"
    )


def test_tool_calls_says_each_call_is_a_name_arguments_pair() -> None:
    """``tool_calls("ls", {"path": "."})`` failed "not enough values to unpack"."""
    with pytest.raises(
        TypeError, match=r"tool_calls takes \(name, arguments\) pairs, one per call; got 'ls'"
    ):
        tool_calls("ls", {"path": "."})  # type: ignore[arg-type]
