"""Making a tool: ``ToolContext`` (what a tool may know about its call), ``Tool`` and
the ``@tool`` decorator, which builds a tool's arguments model from a function's
signature (its parameters checked as it is defined, ``_tool_checks``). Imported from
``dsh.tools``, with the registry and the executor."""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, UnionType
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin, overload

from pydantic import BaseModel

from dsh._tool_checks import (
    arguments_model,
    arguments_schema,
    check_description,
    check_name,
    check_names_given,
    check_parameter_name,
    check_text_arguments,
    parameters_of,
)
from dsh.errors import DshError
from dsh.messages import ToolCall, ToolSpec

if TYPE_CHECKING:
    from dsh.agent import Agent

__all__ = ["Tool", "ToolContext", "tool"]


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
    #: its arguments are checked off the event loop (a schema tool's whose schema has
    #: patterns, ``dsh._schema_tool``): worked out once, not on each call
    _off_loop: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_name(self.name)
        schema = arguments_schema(self.name, self.arguments)
        for option in ("path_args", "command_args"):
            check_text_arguments(self.name, option, getattr(self, option), self.arguments, schema)
        check_description(self.name, self.description)  # a warning: after the refusals
        schema.pop("title", None)
        spec = ToolSpec(name=self.name, description=self.description, parameters=schema)
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "is_async", inspect.iscoroutinefunction(self.run))
        from dsh._schema_tool import SchemaArguments  # which imports this module

        off_loop = issubclass(self.arguments, SchemaArguments) and self.arguments.__dsh_kept__
        object.__setattr__(self, "_off_loop", bool(off_loop))


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
            check_parameter_name(tool_name, param.name)
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
