"""Tools: typed functions the model can call, their registry and the default executor.

A tool's arguments are a pydantic model, so its JSON schema (what the model is told)
and its validation (what the model sent) come from one definition. ``tool()`` builds
that model from a function's signature (``_tool_making``, re-exported here).
"""

from __future__ import annotations

import inspect
import json

# A tool's string annotation left unresolved is looked up in this module's names
# (``_tool_checks``): those below were here when tools were made here, and stay.
from collections.abc import Callable, Mapping, Sequence  # noqa: F401
from pathlib import Path  # noqa: F401
from typing import Annotated, Any, Literal, Union, final  # noqa: F401

from anyio import to_thread
from pydantic import BaseModel, ValidationError

from dsh._json import encode_any
from dsh._schema_tool import SCHEMA_PROBLEMS, schema_tool
from dsh._secrets import get_logger
from dsh._stray import failed, failure_words
from dsh._tool_checks import ToolDescriptionWarning
from dsh._tool_making import Tool, ToolContext, tool
from dsh.errors import DshError, exception_words
from dsh.messages import ToolCall, ToolResult, ToolSpec, trusted

log = get_logger("dsh.tools")

# where users import them: reprs (and warnings filters) say so
Tool.__module__ = ToolContext.__module__ = ToolDescriptionWarning.__module__ = __name__

__all__ = [
    "ArgumentsError",
    "Tool",
    "ToolContext",
    "ToolDescriptionWarning",
    "ToolError",
    "ToolRegistry",
    "read_arguments",
    "schema_tool",
    "tool",
]


class ToolError(Exception):
    """A tool's expected refusal (a missing file, a binary one), worded for the model:
    its error result is ``tool 'NAME' failed: MESSAGE``, without the exception's type,
    which any other exception is shown with (it may be a bug of the tool)."""


class ArgumentsError(ValueError):
    """A call's arguments cannot be read. ``kind`` says which step failed: ``json``
    (not JSON), ``object`` (JSON, but not an object), ``schema`` (the tool's model
    refused them); ``detail`` is the parser's or the model's own words."""

    def __init__(self, kind: Literal["json", "object", "schema"], detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


def read_arguments(tool: Tool, call: ToolCall) -> BaseModel:
    """The arguments of ``call`` as ``tool``'s model, read as the core executor reads
    them (empty text means no arguments; defaults filled in). A policy plugin checking
    the values a tool will receive reads them with this too. Raises ArgumentsError.
    A schema tool with patterns keeps its last results: the executor's read of a call
    a policy plugin read already checks nothing again."""
    try:  # parsed and validated in one pydantic-core pass: ``model_validate_json``
        # without its Python wrapper (which passes its defaults on to the same call)
        validated: BaseModel = tool.arguments.__pydantic_validator__.validate_json(call.arguments)
        return validated
    except ValidationError as exc:  # a schema tool's problems say where each is
        for error in exc.errors():
            if error["type"] == SCHEMA_PROBLEMS:
                raise ArgumentsError("schema", error["msg"]) from None
        # else work out which step fails, and say so
    try:
        raw = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError as exc:
        raise ArgumentsError("json", str(exc)) from None
    if not isinstance(raw, dict):
        raise ArgumentsError("object")
    try:
        return tool.arguments.model_validate(raw)
    except ValidationError as exc:
        if (first := exc.errors()[0])["type"] == SCHEMA_PROBLEMS:  # of {} for empty text
            raise ArgumentsError("schema", first["msg"]) from None
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(arguments)'}: {e['msg']}" for e in exc.errors()
        )
        raise ArgumentsError("schema", problems) from None


def _error(call: ToolCall, message: str) -> ToolResult:
    return ToolResult(call_id=call.id, content=message, is_error=True)


@final
class ToolRegistry:
    """The tools of a harness, by name, with the plugin each came from."""

    __slots__ = ("_origin", "_specs", "_tools")

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._origin: dict[str, str] = {}
        self._specs: tuple[ToolSpec, ...] | None = None

    def add(self, plugin: str, tool: Tool) -> None:
        """The ``register`` callback of ``register_tools`` (stamped with ``plugin``)."""
        if not isinstance(tool, Tool):
            raise _not_a_tool(plugin, tool)
        if tool.name in self._tools:
            raise DshError(
                f"tool {tool.name!r} is registered twice: by {self._origin[tool.name]!r} "
                f"and {plugin!r}"
            )
        self._tools[tool.name] = tool
        self._origin[tool.name] = plugin
        self._specs = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def origin(self, name: str) -> str:
        return self._origin[name]

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is told about every tool (cached until a tool is added)."""
        if self._specs is None:
            self._specs = tuple(t.spec for t in self._tools.values())
        return self._specs

    async def execute(self, call: ToolCall, context: ToolContext | None = None) -> ToolResult:
        """Run ``call``; every failure becomes an error result the model can read."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return _error(call, f"unknown tool {call.name!r} (available tools: {known})")
        try:
            if tool._off_loop:
                # its patterns may take half a second: the loop runs on (and keeps it)
                args = await to_thread.run_sync(read_arguments, tool, call)
            else:
                args = read_arguments(tool, call)
        except ArgumentsError as exc:
            if exc.kind == "json":
                return _error(call, f"arguments for {call.name!r} are not valid JSON: {exc.detail}")
            if exc.kind == "object":
                return _error(call, f"arguments for {call.name!r} must be a JSON object")
            return _error(call, f"invalid arguments for {call.name!r}: {exc.detail}")
        kwargs = dict(args.__dict__)  # the fields, validated
        if tool.wants_context:
            if context is None:
                return _error(call, f"tool {call.name!r} needs a context and none was given")
            kwargs["context"] = context
        try:
            result = tool.run(**kwargs)
            if tool.is_async:
                result = await result
            content = result if isinstance(result, str) else encode_any(result).decode()
        except BaseException as exc:
            if not failed(exc):  # a real cancellation (an abort) propagates
                raise
            # the model reads the error; whoever debugs the tool wants the traceback
            log.debug("tool %r failed on call %s", call.name, call.id, exc_info=True)
            return _error(call, f"tool {call.name!r} failed: {_why(exc)}")
        return trusted(ToolResult, {"call_id": call.id, "content": content, "is_error": False})


#: The most sub-exceptions of a group an error result words one by one.
_GROUP_SHOWN = 10


def _not_a_tool(plugin: str, registered: object) -> DshError:
    if inspect.isroutine(registered):  # a function not made a tool
        return DshError(
            f"plugin {plugin!r} registered the function {registered.__name__!r}, which is "
            "not a dsh Tool; wrap it with @dsh.tools.tool"
        )
    if isinstance(registered, list | tuple | set | frozenset):  # register([a, b])
        count = len(registered)
        return DshError(
            f"plugin {plugin!r} registered a {type(registered).__name__} of {count} "
            f"item{'' if count == 1 else 's'}, which is not a dsh Tool; call register(tool) "
            "once per tool"
        )
    shown = repr(registered)
    if len(shown) > _REPR_SHOWN:
        shown = shown[: _REPR_SHOWN - 3] + "..."
    if isinstance(registered, str | int | float | bool | type(None)):
        return DshError(f"plugin {plugin!r} registered {shown}, which is not a dsh Tool")
    return DshError(
        f"plugin {plugin!r} registered a {type(registered).__name__} ({shown}), which is "
        "not a dsh Tool"
    )


#: The most characters of a wrong object's repr an error shows.
_REPR_SHOWN = 60


def _why(exc: BaseException) -> str:
    """``Type: message`` (a ToolError's message alone); for an exception group (a task
    group's), each exception in it too, nested groups flattened: the model reads why
    each part failed."""
    if isinstance(exc, ToolError):
        return str(exc)
    said = failure_words(exc)  # a SystemExit or a stray cancellation too
    if not isinstance(exc, BaseExceptionGroup):
        return said
    leaves: list[BaseException] = []
    groups: list[BaseExceptionGroup[BaseException]] = [exc]
    while groups:
        for inner in groups.pop(0).exceptions:
            if isinstance(inner, BaseExceptionGroup):
                groups.append(inner)
            else:
                leaves.append(inner)
    parts = [exception_words(e) for e in leaves[:_GROUP_SHOWN]]
    if len(leaves) > _GROUP_SHOWN:
        parts.append(f"and {len(leaves) - _GROUP_SHOWN} more")
    return f"{said}: " + "; ".join(parts)
