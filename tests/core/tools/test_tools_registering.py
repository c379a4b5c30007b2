"""What a plugin author is told when a ``register_*`` call is wrong: the plugin, the
hook and the call as the author wrote it, not dsh's internal callbacks or a whole
repr; and a tool the model would be told nothing of (no description) is refused."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from dsh import DshError, hookimpl
from dsh.testing import ScriptedModel, scripted_harness
from dsh.tools import Tool, ToolDescriptionWarning, tool


class Settings(BaseModel):
    x: int = 1


async def _start(plugin: object) -> str:
    """The text of the error starting a harness with ``plugin`` (named 'mine')."""
    with pytest.raises(DshError) as refused:
        async with scripted_harness(
            ScriptedModel([]), plugins=[("mine", plugin)], load_entry_points=False
        ):
            pass
    return str(refused.value)


class SettingsByName:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Settings, name="other")


class ModelByNam:
    @hookimpl
    def register_models(self, register: Any) -> None:
        register(ScriptedModel(["x"]), nam="other")


class ToolWithOptions:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(spoken, mutating=True)


class NoArguments:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register()


@tool
def spoken(text: str) -> str:
    """Say the text."""
    return text


@pytest.mark.parametrize(
    ("plugin", "said"),
    [
        (
            SettingsByName(),
            "plugin 'mine': register_settings's register() got an unexpected keyword "
            "argument 'name'; call it as register(Model) or register(Model, section='NAME')",
        ),
        (
            ModelByNam(),
            "plugin 'mine': register_models's register() got an unexpected keyword "
            "argument 'nam'; call it as register(model) or register(model, name='NAME')",
        ),
        (
            ToolWithOptions(),
            "plugin 'mine': register_tools's register() got an unexpected keyword "
            "argument 'mutating'; call it as register(tool), once per tool (a tool's "
            "options are given where it is made: @tool(mutating=...))",
        ),
        (
            NoArguments(),
            "plugin 'mine': register_tools's register() missing a required argument: "
            "'tool'; call it as register(tool), once per tool (a tool's options are given "
            "where it is made: @tool(mutating=...))",
        ),
    ],
)
async def test_a_wrong_register_call_is_said_in_the_authors_terms(
    plugin: object, said: str
) -> None:
    assert await _start(plugin) == said


class ToolList:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register([spoken, spoken])


async def test_a_list_of_tools_is_refused_without_its_repr() -> None:
    assert await _start(ToolList()) == (
        "plugin 'mine' registered a list of 2 items, which is not a dsh Tool; call "
        "register(tool) once per tool"
    )


class LongThing:
    def __repr__(self) -> str:
        return "LongThing(" + "x" * 500 + ")"


class ThingRegistered:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(LongThing())


async def test_another_object_is_named_by_its_type_and_a_short_repr() -> None:
    said = await _start(ThingRegistered())
    assert said.startswith("plugin 'mine' registered a LongThing (LongThing(xxx")
    assert said.endswith("...), which is not a dsh Tool")
    assert len(said) < 160


def test_a_tool_without_a_description_is_warned_of_at_the_authors_line() -> None:
    with pytest.warns(ToolDescriptionWarning) as warned:

        @tool
        def quiet(text: str) -> str:
            return text

    [warning] = warned
    assert str(warning.message) == (
        "tool 'quiet' has no description: the model is told only its name and "
        "arguments; give the function a docstring, or @tool(description=...)"
    )
    assert warning.filename == __file__  # shown once per tool, where it is made
    assert quiet.spec.description == ""  # made all the same: an installed plugin loads
    with pytest.warns(ToolDescriptionWarning, match="tool 'blank' has no description") as made:
        Tool(name="blank", description="  ", arguments=Settings, run=lambda x: x)
    assert made[0].filename == __file__
    with pytest.raises(DshError, match="tool 'odd': its description is int, not text"):
        Tool(name="odd", description=3, arguments=Settings, run=lambda x: x)  # type: ignore[arg-type]


def test_a_description_given_makes_up_for_a_missing_docstring() -> None:
    @tool(description="Say it.")
    def quiet(text: str) -> str:
        return text

    assert quiet.spec.description == "Say it."
