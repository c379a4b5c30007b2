"""A tool from a raw JSON schema (``dsh.tools.schema_tool``): for tools defined
elsewhere, an MCP server's, whose arguments are a schema, not a Python signature. The
schema is checked as the tool is made, the arguments against it as each call is read
(``_json_schema``, on the ``jsonschema`` library of dsh-core's ``schema`` extra), and
the tool's function receives them as one dict."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from dsh._json import checked_copy
from dsh._json_schema import load_validator, problems
from dsh._tool_checks import check_name
from dsh._tool_making import Tool
from dsh.errors import DshError, EventDataError

__all__ = ["SCHEMA_PROBLEMS", "SchemaArguments", "schema_tool"]

#: The pydantic error type of arguments a schema tool's schema refuses: its message
#: says each problem and where (``dsh.tools.read_arguments`` gives it as it is).
SCHEMA_PROBLEMS = "dsh_json_schema"


class SchemaArguments(BaseModel):
    """The arguments of a tool made from a JSON schema: ``arguments``, the JSON object
    the model sent, checked against ``__dsh_json_schema__`` (the class's, one per tool)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    __dsh_json_schema__: ClassVar[dict[str, Any]] = {"type": "object"}
    __dsh_validator__: ClassVar[Any] = None

    arguments: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise PydanticCustomError("model_type", "the arguments must be a JSON object")
        found = problems(cls.__dsh_validator__, data)
        if found:  # the text as the context's: braces in it are not a template's
            raise PydanticCustomError(SCHEMA_PROBLEMS, "{problems}", {"problems": "; ".join(found)})
        return {"arguments": data}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The schema the tool was made from, as it is (a copy): what the model is told."""
        return copy.deepcopy(cls.__dsh_json_schema__)


def schema_tool(
    name: str,
    description: str,
    schema: Mapping[str, Any],
    run: Callable[[dict[str, Any]], Any],
    *,
    mutating: bool = False,
    reads: bool = True,
) -> Tool:
    """A ``Tool`` whose arguments are ``schema`` (a JSON schema of ``type: object``, as
    an MCP server lists its tools'): the model is told it as it is, and ``run`` (plain
    or ``async``) receives the arguments the model sent, a dict checked against it.
    A schema that is not one is refused (``DshError`` naming the tool and where); so is
    every schema without the ``jsonschema`` library (``pip install 'dsh-core[schema]'``)."""
    check_name(name)
    if not callable(run):
        raise DshError(f"tool {name!r}: run is {type(run).__name__}, not a function")
    if not isinstance(schema, Mapping):
        raise DshError(
            f"tool {name!r}: its schema is {type(schema).__name__}, not a JSON object (a dict)"
        )
    try:  # the providers are sent it as JSON: a set or a NaN would fail each request
        checked: dict[str, Any] = checked_copy(dict(schema), name, "schema")  # the tool's own
    except EventDataError as exc:
        raise DshError(f"tool {name!r}: its {exc.path}: {exc.reason}") from None
    if checked.get("type") != "object":
        raise DshError(
            f"tool {name!r}: its schema's type is {checked.get('type')!r}, not 'object': a "
            "model sends a tool's arguments as one JSON object, named by its properties"
        )
    model = type(
        f"{name}_arguments",
        (SchemaArguments,),
        {
            "__dsh_json_schema__": checked,
            "__dsh_validator__": load_validator(name, checked),
            "__module__": "dsh.tools",
        },
    )

    async def call(arguments: dict[str, Any]) -> Any:
        result = run(arguments)
        return await result if inspect.isawaitable(result) else result

    call.__name__ = call.__qualname__ = name
    return Tool(
        name=name,
        description=description,
        arguments=model,
        run=call,
        mutating=mutating,
        reads=reads,
    )
