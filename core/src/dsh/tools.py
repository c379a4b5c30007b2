"""Tools: typed functions the model can call, their registry and the default executor.

A tool's arguments are a pydantic model, so its JSON schema (what the model is told)
and its validation (what the model sent) come from one definition. ``tool()`` builds
that model from a function's signature.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, UnionType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    Union,
    final,
    get_args,
    get_origin,
    overload,
)

from pydantic import BaseModel, ValidationError

from dsh._json import encode_any
from dsh._secrets import get_logger
from dsh._stray import failed, stray_words
from dsh._tool_checks import (
    arguments_model,
    arguments_schema,
    check_name,
    check_names_given,
    check_text_arguments,
    parameters_of,
)
from dsh.errors import DshError
from dsh.messages import ToolCall, ToolResult, ToolSpec, trusted

if TYPE_CHECKING:
    from dsh.agent import Agent

log = get_logger("dsh.tools")

__all__ = [
    "ArgumentsError",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "read_arguments",
    "tool",
]


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may know about the call it serves. A tool function receives it when
    it has a parameter named ``context`` (that parameter is not shown to the model):
    the agent making the call (its ``id``, ``options``, ``session``, ``harness``), the
    workspace, and the call itself."""

    agent: Agent
    workspace: Path
    call: ToolCall

    def resolve_path(self, path: str | os.PathLike[str]) -> Path:
        """``path`` (an argument the model sent: a ``str``, or a ``Path`` when the tool's
        parameter is typed so) as the built-in file tools take it:
        absolute, from the workspace, ``~`` expanded, ``..`` and symlinks resolved.
        Raises ``PermissionError`` naming it when it lies outside the workspace and the
        agent's ``extra_roots``, ``ValueError`` when it names no file (empty, with a NUL
        byte, from an unknown ``~user``, through a symlink loop)."""
        from dsh.builtin_tools._paths import roots_of

        return roots_of(self).resolve(os.fspath(path))


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool. ``run`` (plain or ``async def``) receives the validated arguments as
    keyword arguments and returns text; anything else is sent as JSON (pydantic-core
    encodes it: dicts, lists, numbers, models, dataclasses, datetimes, sets).

    ``mutating``, ``path_args`` and ``command_args`` tell policy plugins (permissions)
    what the tool does and which arguments hold paths or shell commands. ``reads``
    (default True) says the tool may show what the files its path arguments name hold;
    False: it only writes, removes or lists them (the built-in ``write``, ``ls``,
    ``glob``), so rules about reading files do not cover it.
    Plain ``run`` functions execute on the event loop: make blocking tools async.
    """

    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[..., Any]
    mutating: bool = False
    path_args: tuple[str, ...] = ()
    command_args: tuple[str, ...] = ()
    reads: bool = True
    #: ``run`` takes a ``context: ToolContext`` keyword argument
    wants_context: bool = False
    spec: ToolSpec = field(init=False)
    is_async: bool = field(init=False)

    def __post_init__(self) -> None:
        check_name(self.name)
        schema = arguments_schema(self.name, self.arguments)
        for option in ("path_args", "command_args"):
            check_text_arguments(self.name, option, getattr(self, option), self.arguments, schema)
        schema.pop("title", None)
        spec = ToolSpec(name=self.name, description=self.description, parameters=schema)
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "is_async", inspect.iscoroutinefunction(self.run))


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    mutating: bool = False,
    path_args: Sequence[str] = (),
    command_args: Sequence[str] = (),
    reads: bool = True,
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    mutating: bool = False,
    path_args: Sequence[str] = (),
    command_args: Sequence[str] = (),
    reads: bool = True,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a ``Tool`` from a typed function: its parameters become the arguments model,
    its docstring the description. Use bare (``@tool``) or with options. The name (the
    function's by default) must match ``^[a-zA-Z0-9_-]{1,64}$``, as providers require."""

    def build(function: Callable[..., Any], around: Mapping[str, Any]) -> Tool:
        fields: dict[str, Any] = {}
        wants_context = False
        tool_name = function.__name__ if name is None else name
        check_names_given(tool_name, "path_args", path_args)
        check_names_given(tool_name, "command_args", command_args)
        for param in parameters_of(function, around):
            if _is_context(tool_name, param):
                wants_context = True
                continue
            if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
                star = "**" if param.kind is param.VAR_KEYWORD else ""
                star = "*" if param.kind is param.VAR_POSITIONAL else star
                raise DshError(
                    f"tool {tool_name!r}: parameter "
                    f"{star}{param.name} is not a named parameter; a model "
                    "sends each argument by name, so a tool takes named parameters only "
                    "(no /, *args or **kwargs)"
                )
            if param.annotation is param.empty:
                raise DshError(
                    f"tool {tool_name!r}: parameter {param.name} has no type "
                    f"annotation; annotate it ({param.name}: str, or Any for any JSON value) "
                    "so that the model is told what to send and the call is checked"
                )
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (param.annotation, default)
        return Tool(
            name=tool_name,
            description=description or inspect.getdoc(function) or "",
            arguments=arguments_model(tool_name, fields),
            run=function,
            mutating=mutating,
            path_args=tuple(path_args),
            command_args=tuple(command_args),
            reads=reads,
            wants_context=wants_context,
        )

    if fn is not None:
        return build(fn, _defined_around(fn, sys._getframe(1)))

    def decorate(function: Callable[..., Any]) -> Tool:
        return build(function, _defined_around(function, sys._getframe(1)))

    return decorate


def _defined_around(function: Callable[..., Any], frame: FrameType) -> Mapping[str, Any]:
    """The names of ``frame`` (where the tool is made) if ``function`` was defined in
    it, for string annotations naming a type defined there too (as pydantic finds a
    model's); else none: another scope's function reads its module's names only."""
    scope, local, _ = getattr(function, "__qualname__", "").rpartition(".<locals>.")
    return frame.f_locals if local and scope == frame.f_code.co_qualname else {}


def _is_context(tool: str, param: inspect.Parameter) -> bool:
    """Whether ``param`` is the tool's ``context``: named so, and a ``ToolContext``
    (or unannotated, or ``Any``); a DshError naming the tool and the parameter when
    only its name or only its type says so (the name alone is what is recognised)."""
    annotation = param.annotation
    is_context_type = _is_context_type(annotation)
    if param.name != "context":
        if is_context_type:
            raise DshError(
                f"tool {tool!r}: parameter {param.name!r} is a ToolContext; name it "
                "'context' (the context is recognised by that name, and the model sends "
                "every other parameter)"
            )
        return False
    if is_context_type or annotation is param.empty or annotation is Any:
        return True
    shown = annotation.__qualname__ if isinstance(annotation, type) else repr(annotation)
    raise DshError(
        f"tool {tool!r}: parameter 'context' is typed {shown}: a parameter named "
        "'context' receives the ToolContext and is not shown to the model; annotate it "
        "ToolContext, or rename it for an argument the model sends"
    )


def _is_context_type(annotation: Any) -> bool:
    """Whether ``annotation`` is ``ToolContext``, also optional (``| None``,
    ``Optional[...]``) or ``Annotated``; as a string (``from __future__ import
    annotations``, or imported only for type checkers) by the name it gives."""
    if isinstance(annotation, str):
        text = annotation.replace(" ", "").removesuffix("|None").removeprefix("None|")
        wrapped = _WRAPPED.fullmatch(text)
        return (wrapped[1] if wrapped else text).rpartition(".")[2] == "ToolContext"
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, UnionType):
        members = [member for member in get_args(annotation) if member is not type(None)]
        annotation = members[0] if len(members) == 1 else None
    return annotation is ToolContext


_WRAPPED = re.compile(r"(?:[\w.]+\.)?(?:Optional|Annotated)\[([\w.]+)(?:,.*)?\]")


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
    the values a tool will receive reads them with this too. Raises ArgumentsError."""
    try:  # parsed and validated in one pydantic-core pass: ``model_validate_json``
        # without its Python wrapper (which passes its defaults on to the same call)
        validated: BaseModel = tool.arguments.__pydantic_validator__.validate_json(call.arguments)
        return validated
    except ValidationError:
        pass  # work out which step fails, and say so
    try:
        raw = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError as exc:
        raise ArgumentsError("json", str(exc)) from None
    if not isinstance(raw, dict):
        raise ArgumentsError("object")
    try:
        return tool.arguments.model_validate(raw)
    except ValidationError as exc:
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
    return DshError(f"plugin {plugin!r} registered {registered!r}, which is not a dsh Tool")


def _why(exc: BaseException) -> str:
    """``Type: message`` (a ToolError's message alone); for an exception group (a task
    group's), each exception in it too, nested groups flattened: the model reads why
    each part failed."""
    if isinstance(exc, ToolError):
        return str(exc)
    if not isinstance(exc, Exception):
        return stray_words(exc)
    said = f"{type(exc).__name__}: {exc}"
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
    parts = [f"{type(e).__name__}: {e}" for e in leaves[:_GROUP_SHOWN]]
    if len(leaves) > _GROUP_SHOWN:
        parts.append(f"and {len(leaves) - _GROUP_SHOWN} more")
    return f"{said}: " + "; ".join(parts)
