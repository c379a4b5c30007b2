"""A parameter name pydantic treats specially is refused as the tool is defined,
naming the tool, the parameter and why. Before, ``def f(_x: str)`` made a tool whose
schema had no ``_x`` and every call failed "Extra inputs are not permitted";
``_x: str = "d"`` and ``model_config`` always ran with their defaults, and
``model_validate`` gave a ValueError about the internal arguments model. A name that
only shadows a model attribute (``json``, ``schema``) is an argument as any other."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import DshError
from dsh.tools import tool

#: these tools are made to check their arguments; a description is not the point
pytestmark = pytest.mark.filterwarnings("ignore::dsh.tools.ToolDescriptionWarning")


def _refused(name: str, default: Any = ...) -> str:
    """What defining a tool ``f`` with a str parameter ``name`` is refused with."""
    parameter = f"{name}: str" if default is ... else f"{name}: str = {default!r}"
    namespace: dict[str, Any] = {}
    exec(f"def f({parameter}) -> str:\n    return ''", namespace)
    with pytest.raises(DshError) as caught:
        tool(namespace["f"])
    return str(caught.value)


@pytest.mark.parametrize(("name", "default"), [("_x", ...), ("_x", "d"), ("_", ...)])
def test_a_leading_underscore_is_refused_as_a_private_attribute(name: str, default: Any) -> None:
    assert _refused(name, default) == (
        f"tool 'f': parameter {name!r} starts with '_', which pydantic takes for a private "
        "attribute: the model would neither be told of it nor be able to send it; rename it"
    )


@pytest.mark.parametrize(
    "name", ["model_config", "model_dump", "model_validate", "model_validate_json", "model_dump_x"]
)
def test_a_name_pydantic_reserves_for_its_models_is_refused(name: str) -> None:
    said = _refused(name)
    assert said.startswith(f"tool 'f': parameter {name!r} is a name pydantic reserves ")
    assert said.endswith("; rename it")


def test_names_near_the_reserved_ones_are_taken() -> None:
    @tool
    def f(model: str, model_name: str, schema_version: int, json_text: str, x_: str) -> str:
        return ""

    assert list(f.spec.parameters["properties"]) == [
        "model", "model_name", "schema_version", "json_text", "x_"
    ]  # fmt: skip


@pytest.mark.filterwarnings("error")
def test_a_name_shadowing_a_model_attribute_is_an_argument_without_a_warning() -> None:
    """``http_post(url, json)``: pydantic only warns that ``json`` shadows
    ``BaseModel.json``; the field is held and sent as any other."""

    @tool
    def post(url: str, json: dict[str, int], schema: str, copy: bool = False) -> str:
        return f"{url} {json} {schema} {copy}"

    assert list(post.spec.parameters["properties"]) == ["url", "json", "schema", "copy"]
    args = post.arguments.model_validate({"url": "u", "json": {"a": 1}, "schema": "s"})
    assert args.__dict__ == {"url": "u", "json": {"a": 1}, "schema": "s", "copy": False}
