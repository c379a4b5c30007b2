"""A tool is refused as it is defined, naming the tool (and the parameter), when a
model provider could not take it: a name outside ``^[a-zA-Z0-9_-]{1,64}$`` was sent as
it was, and every request failed with the provider's 400 naming no plugin; a parameter
type without a JSON schema was refused in pydantic's words about the internal
arguments model (``f_arguments`` ... ``model_rebuild()``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel, create_model

from dsh import DshError, hookimpl
from dsh.builtin_tools import builtin_tools
from dsh.errors import HookError
from dsh.testing import ScriptedModel, scripted_harness
from dsh.tools import Tool, tool

#: these tools are made to check their arguments; a description is not the point
pytestmark = pytest.mark.filterwarnings("ignore::dsh.tools.ToolDescriptionWarning")

if TYPE_CHECKING:
    from decimal import Decimal
    from pathlib import Path

RULE = (
    "a tool name is 1 to 64 letters, digits, _ or - (^[a-zA-Z0-9_-]{1,64}$: OpenAI and "
    "Anthropic refuse every request with another)"
)


def run(x: int) -> str:
    """Do it."""
    return str(x)


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("my tool", "has characters model providers refuse: ' '"),
        ("mcp:fs.read", "has characters model providers refuse: '.' ':'"),
        ("lé", "has characters model providers refuse: 'é'"),
        ("t" * 65, "has 65 characters, more than 64"),
        ("", "is empty"),  # was: the function's own name, quietly
    ],
)
def test_a_name_providers_refuse_is_refused_when_the_tool_is_made(name: str, what: str) -> None:
    with pytest.raises(DshError) as caught:
        tool(name=name)(run)
    assert str(caught.value) == f"tool {name!r}: the name {what}; {RULE}"
    with pytest.raises(DshError):  # a Tool made by hand too
        Tool(name=name, description="", arguments=create_model("a"), run=run)


def test_names_providers_accept_pass() -> None:
    for name in ("run", "t" * 64, "read-file_2", "A"):
        assert tool(name=name)(run).spec.name == name
    assert tool(run).name == "run"
    assert all(len(t.name) <= 64 for t in builtin_tools())


class _BadName:
    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        @tool(name="my tool")
        def spaced(x: int) -> str:
            return "a"

        register(spaced)


async def test_a_plugin_s_tool_with_such_a_name_stops_the_start_naming_both() -> None:
    with pytest.raises(HookError) as caught:
        async with scripted_harness(
            ScriptedModel([]), plugins=[("p", _BadName())], load_entry_points=False
        ):
            pass
    assert caught.value.plugin == "p"
    assert caught.value.for_user().startswith("tool 'my tool': the name has characters")
    assert caught.value.for_user().endswith(f"{RULE} (plugin 'p')")


# -- parameter types ---------------------------------------------------------------


def _refused(function: Callable[..., Any]) -> DshError:
    with pytest.raises(DshError) as caught:
        tool(function)
    assert caught.value.__cause__ is not None  # pydantic's own error, for whoever digs
    return caught.value


NOT_DEFINED = (
    "is not defined when the tool is made (imported only for type checkers? import it at "
    "run time: the arguments the model sends are checked against it)"
)


def test_an_undefined_type_names_the_tool_the_parameter_and_the_name() -> None:
    def f(a: int, x: NotDefinedAnywhere) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    said = str(_refused(f))
    assert said == f"tool 'f': parameter 'x': its type NotDefinedAnywhere {NOT_DEFINED}"


def test_a_type_imported_only_for_type_checkers_is_named_the_others_resolved() -> None:
    def total(amount: Decimal, count: int = 1) -> str:
        return ""

    said = str(_refused(total))
    assert said == f"tool 'total': parameter 'amount': its type Decimal {NOT_DEFINED}"


def test_a_type_checking_name_dsh_tools_imports_too_still_resolves_as_before() -> None:
    # the arguments model is made in dsh.tools, whose names pydantic looked in: a tool
    # annotated `p: Path` with Path imported only for type checkers worked, and still does
    def f(p: Path) -> str:
        return str(p)

    assert tool(f).spec.parameters["properties"]["p"]["format"] == "path"


def test_a_callable_parameter_is_said_to_have_no_json_schema() -> None:
    def f(a: int, x: Callable[[int], int]) -> str:
        return ""

    assert str(_refused(f)) == (
        "tool 'f': parameter 'x': its type Callable[[int], int] has no JSON schema: "
        "a model sends JSON (strings, numbers, booleans, null, lists, objects; pydantic "
        "models and dataclasses of them)"
    )


class Handle:
    pass


def test_a_type_pydantic_cannot_check_is_named() -> None:
    def f(handle: Handle) -> str:
        return ""

    assert str(_refused(f)) == (
        "tool 'f': parameter 'handle': pydantic cannot check a value of type Handle: use "
        "JSON types, a pydantic model or a dataclass of them"
    )


def test_a_tool_made_by_hand_is_told_the_same() -> None:
    class Arguments(BaseModel):
        ok: int
        then: Callable[[], None]

    with pytest.raises(DshError) as caught:
        Tool(name="hand", description="", arguments=Arguments, run=run)
    assert str(caught.value).startswith("tool 'hand': parameter 'then': its type ")


# -- types defined where the tool is (``from __future__ import annotations``) ----------


def test_a_type_defined_beside_the_tool_in_a_function_is_the_arguments_type() -> None:
    """With string annotations, a pydantic model defined in the same function as the
    tool (as a ``register_tools`` impl that imports pydantic lazily would) was looked
    up in the tool's module only, and the tool was refused as "not defined". The names
    around the ``@tool`` line are read too, as pydantic reads them for a model."""

    class Opts(BaseModel):
        upper: bool = False

    @tool
    def bare(text: str, opts: Opts | None = None) -> str:
        return text

    @tool(name="with_options")
    def optioned(opts: Opts) -> str:
        return str(opts.upper)

    read = bare.arguments.model_validate({"text": "a", "opts": {"upper": True}})
    assert read.opts == Opts(upper=True)
    assert optioned.arguments.model_validate({"opts": {}}).opts == Opts()
    assert "Opts" in str(optioned.arguments.model_json_schema())


def test_a_type_defined_after_the_tool_is_still_said_to_be_undefined() -> None:
    def early(opts: Later) -> str:
        return ""

    assert NOT_DEFINED in str(_refused(early))

    class Later(BaseModel):
        x: int = 0


class Where(BaseModel):
    city: str


def _forecast(where: Where) -> str:
    return where.city


def test_a_function_of_another_scope_reads_its_module_s_names_not_the_caller_s() -> None:
    """Only a function defined where ``@tool`` is applied sees the names there: one
    made elsewhere, given a local of the same name as its annotation, kept its own."""
    Where = {"unrelated": "a local of the same name"}
    made = tool(_forecast)
    assert made.arguments.model_validate({"where": {"city": "Oslo"}}).where.city == "Oslo"
    assert Where


def test_tool_classes_are_named_where_users_import_them() -> None:
    """``Tool`` and ``ToolContext`` live in a private module; their reprs (in error
    messages, a debugger, docs) name ``dsh.tools``, where they are imported from."""
    from dsh.tools import ToolContext

    assert repr(Tool) == "<class 'dsh.tools.Tool'>"
    assert repr(ToolContext) == "<class 'dsh.tools.ToolContext'>"
