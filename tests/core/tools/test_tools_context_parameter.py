"""A tool's ``context`` parameter is recognised by its name and must be a
``ToolContext`` (docs/tools.md): a ``ToolContext`` parameter under another name, and a
parameter named ``context`` of another type, are refused as the tool is made, naming the
tool and the parameter.

Before: ``def probe(x: str, ctx: ToolContext)`` was refused in pydantic's words about an
internal scratch model (```probe` is not fully defined; you should define `Agent`...``),
and ``context: str = ""`` disappeared from the schema and received a ``ToolContext``.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh import DshError
from dsh.tools import ToolContext, tool

#: these tools are made to check their arguments; a description is not the point
pytestmark = pytest.mark.filterwarnings("ignore::dsh.tools.ToolDescriptionWarning")

NAME_IT = "name it 'context'"


def test_a_tool_context_under_another_name_is_refused_saying_name_it_context() -> None:
    def probe(x: str, ctx: ToolContext) -> str:
        """Probe."""
        return x

    with pytest.raises(DshError) as caught:
        tool(probe)

    message = str(caught.value)
    assert message.startswith("tool 'probe': parameter 'ctx' is a ToolContext")
    assert NAME_IT in message
    assert "not fully defined" not in message and "Agent" not in message


def test_a_tool_context_named_only_for_type_checkers_is_refused_too() -> None:
    namespace: dict[str, Any] = {}
    source = (
        "from __future__ import annotations\n"
        "def probe(x: str, ctx: 'dsh.tools.ToolContext') -> str:\n"
        "    return x\n"
    )
    exec(source, namespace)  # the name is not defined at run time

    with pytest.raises(DshError, match=r"^tool 'probe': parameter 'ctx' is a ToolContext"):
        tool(namespace["probe"])


@pytest.mark.parametrize(
    ("annotation", "shown"), [("str", "str"), ("int", "int"), ("str | None", "")]
)
def test_a_parameter_named_context_of_another_type_is_refused(annotation: str, shown: str) -> None:
    namespace: dict[str, Any] = {"ToolContext": ToolContext}
    exec(f"def probe(x: str, context: {annotation} = None) -> str:\n    return x\n", namespace)

    with pytest.raises(DshError) as caught:
        tool(namespace["probe"])

    message = str(caught.value)
    assert message.startswith("tool 'probe': parameter 'context' is typed ")
    assert shown in message and "a parameter named 'context' receives the ToolContext" in message


def test_the_context_parameter_may_be_tool_context_any_or_unannotated() -> None:
    def typed(x: str, context: ToolContext) -> str:
        return x

    def loose(x: str, context: Any) -> str:
        return x

    def bare(x: str, context) -> str:  # type: ignore[no-untyped-def]
        return x

    namespace: dict[str, Any] = {}
    exec(
        "from __future__ import annotations\n"
        "def hinted(x: str, context: ToolContext) -> str:\n    return x\n",
        namespace,
    )  # ToolContext imported only for type checkers: left a string
    for function in (typed, loose, bare, namespace["hinted"]):
        made = tool(function)
        assert made.wants_context
        assert list(made.spec.parameters["properties"]) == ["x"]


OPTIONAL = [
    "ToolContext | None",
    "None | ToolContext",
    "Optional[ToolContext]",
    "typing.Optional[ToolContext]",
    "Annotated[ToolContext, 'given by dsh']",
]


@pytest.mark.parametrize("future", [False, True], ids=["objects", "strings"])
@pytest.mark.parametrize("annotation", OPTIONAL)
def test_an_optional_or_annotated_tool_context_is_one(annotation: str, future: bool) -> None:
    """``context: ToolContext | None = None`` lets a test call the tool directly; it is
    the context as ``ToolContext`` is (objects, and strings under the future import),
    and under another name it is refused saying so, not in pydantic's words."""
    header = "from __future__ import annotations\n" if future else ""
    namespace: dict[str, Any] = {}
    exec(
        f"{header}import typing\nfrom typing import Annotated, Optional\n"
        "from dsh.tools import ToolContext\n"
        f"def named(x: str, context: {annotation} = None) -> str:\n    return x\n"
        f"def misnamed(x: str, ctx: {annotation} = None) -> str:\n    return x\n",
        namespace,
    )

    made = tool(namespace["named"])
    assert made.wants_context
    assert list(made.spec.parameters["properties"]) == ["x"]
    with pytest.raises(DshError, match=r"^tool 'misnamed': parameter 'ctx' is a ToolContext"):
        tool(namespace["misnamed"])
