"""A tool from a raw JSON schema (``dsh.tools.schema_tool``): for tools defined
elsewhere, an MCP server's, whose arguments are a schema, not a Python signature. The
schema is checked as the tool is made, the arguments against it as each call is read
(``_json_schema``, on the ``jsonschema`` library of dsh-core's ``schema`` extra), and
the tool's function receives them as one dict."""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from dsh._json import checked_copy
from dsh._json_schema import has_patterns, load_validator, problems
from dsh._tool_checks import check_name
from dsh._tool_making import Tool
from dsh.errors import DshError, EventDataError

__all__ = ["SCHEMA_PROBLEMS", "SchemaArguments", "schema_tool"]

#: The pydantic error type of arguments a schema tool's schema refuses: its message
#: says each problem and where (``dsh.tools.read_arguments`` gives it as it is).
SCHEMA_PROBLEMS = "dsh_json_schema"
#: How many arguments' problems a schema tool with patterns keeps (``_Kept``).
KEPT: Final = 16


class _Kept:
    """The problems of the last ``KEPT`` arguments a tool's schema with patterns was
    checked against, by a digest of them as JSON (1.0 is not 1, nor are keys in
    another order the same): a policy plugin's ``read_arguments`` and the executor's
    check a call once, and refuse it the same (a pattern not decided in time too).
    The stdlib's JSON, not dsh's own (``dsh._json.encode``, for lossless event data):
    a model's arguments may hold NaN or an infinity, which it writes as ``null``, and
    a schema refusing one accepts ``null``. The key is never written anywhere.
    Worker threads check them (``dsh.tools``): the lock keeps the dict whole."""

    __slots__ = ("_found", "_lock")

    def __init__(self) -> None:
        self._found: dict[bytes, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def problems(self, validator: Any, arguments: dict[str, Any]) -> list[str]:
        text = json.dumps(arguments).encode()  # as ASCII: a lone surrogate too
        key = hashlib.blake2b(text, digest_size=16).digest()
        with self._lock:
            found = self._found.get(key)
        if found is None:
            found = tuple(problems(validator, arguments))
            with self._lock:
                if len(self._found) >= KEPT:
                    self._found.pop(next(iter(self._found)), None)
                self._found[key] = found
        return list(found)


class SchemaArguments(BaseModel):
    """The arguments of a tool made from a JSON schema: ``arguments``, the JSON object
    the model sent, checked against ``__dsh_json_schema__`` (the class's, one per tool)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    __dsh_json_schema__: ClassVar[dict[str, Any]] = {"type": "object"}
    __dsh_validator__: ClassVar[Any] = None
    #: The schema has patterns, whose checks may take ``PATTERN_SECONDS``: the executor
    #: checks them off the event loop, and the results are kept (None: no patterns).
    __dsh_kept__: ClassVar[_Kept | None] = None

    arguments: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise PydanticCustomError("model_type", "the arguments must be a JSON object")
        kept = cls.__dsh_kept__
        validator = cls.__dsh_validator__
        found = problems(validator, data) if kept is None else kept.problems(validator, data)
        if found:
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
            "__dsh_kept__": _Kept() if has_patterns(checked) else None,
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
