"""Mistakes a plugin author new to dsh makes with ``dsh.testing``, each refused where it
is made, saying what is wrong and how to write it (from a third-party review).

Before: ``text(42)`` was taken, and the turn it answered ended in a
``MALFORMED_RESPONSE`` error naming no script entry; ``tool_calls(("ls", 42))`` sent
``42`` as the arguments; ``run_turn(h.agents.create(...), "hi")`` (the ``await``
forgotten) failed with ``AttributeError: 'coroutine' object has no attribute
'session'``.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh.testing import ScriptedModel, max_tokens, run_turn, scripted_harness, text, tool_calls


@pytest.mark.parametrize("part", [42, None, b"ok", ["a", "b"]])
def test_text_refuses_a_part_that_is_not_a_str(part: Any) -> None:
    with pytest.raises(TypeError, match=r"text's parts are str.*got .*part #2"):
        text("fine", part)


def test_max_tokens_refuses_a_partial_that_is_not_a_str() -> None:
    with pytest.raises(TypeError, match=r"got int \(7\)"):
        max_tokens(7)


@pytest.mark.parametrize("arguments", [42, None, ["a"]])
def test_tool_calls_refuses_arguments_neither_a_dict_nor_a_str(arguments: Any) -> None:
    with pytest.raises(TypeError) as refused:
        tool_calls(("ls", arguments))
    said = str(refused.value)
    assert "'ls'" in said and type(arguments).__name__ in said
    assert "a dict (sent as JSON) or a str (sent raw)" in said


async def test_run_turn_names_an_agent_not_awaited() -> None:
    async with scripted_harness(ScriptedModel(["ok"]), load_entry_points=False) as h:
        pending = h.agents.create("a", options={"model": "scripted"})
        with pytest.raises(TypeError, match=r"await h\.agents\.create\(\.\.\.\)"):
            await run_turn(pending, "hi")  # type: ignore[arg-type]
        agent = await pending  # the agent is still made, and answers
        events = await run_turn(agent, "hi")
    assert events[-1].data["reason"] == "completed"


async def test_scripted_harness_takes_a_plugin_object_that_cannot_be_hashed() -> None:
    """A dataclass plugin (``eq=True``: unhashable) works in a ``Harness``; the
    ``scripted_harness`` around it failed, looking for an ``ErrorRecorder`` in pluggy's
    ``get_plugins()`` (a set): ``TypeError: unhashable type: 'Guard'``."""
    import dataclasses

    from dsh import hookimpl
    from dsh.testing import ErrorRecorder

    @dataclasses.dataclass
    class Guard:
        note: str = "Be brief."

        @hookimpl
        def agent_request(self, request: Any) -> Any:
            return request.model_copy(update={"system": self.note})

    model = ScriptedModel(["ok"])
    errors = ErrorRecorder()
    plugins = [("guard", Guard()), errors]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    assert events[-1].data["reason"] == "completed"
    assert model.requests[0].system == "Be brief."
    assert errors.failures == []
