"""Checks of a tool as it is defined, refused in words naming the tool and the
parameter: its name (the providers accept only ``^[a-zA-Z0-9_-]{1,64}$``: another one
would fail every request with a provider's 400 naming no plugin), and its parameters'
types (each needs a JSON schema; pydantic's own errors speak of the internal arguments
model, ``f_arguments``, and advise calling its ``model_rebuild()``)."""

from __future__ import annotations

import contextlib
import inspect
import re
import sys
import warnings
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, Final, ForwardRef, get_args

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.errors import (
    PydanticErrorMixin,
    PydanticInvalidForJsonSchema,
    PydanticSchemaGenerationError,
    PydanticUndefinedAnnotation,
    PydanticUserError,
)

from dsh._arg_numbers import refusing_bools
from dsh.errors import DshError

__all__ = [
    "NAME_PATTERN",
    "ToolDescriptionWarning",
    "arguments_model",
    "arguments_schema",
    "check_description",
    "check_name",
    "check_names_given",
    "check_parameter_name",
    "check_text_arguments",
    "parameters_of",
]

#: What OpenAI and Anthropic accept as a tool's name.
NAME_PATTERN: Final = "^[a-zA-Z0-9_-]{1,64}$"
_NAME: Final = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_MODULES: Final = re.compile(r"\b(typing|collections\.abc)\.")
#: What pydantic raises for a type it cannot check or describe.
_REFUSED: Final = (PydanticUserError, PydanticUndefinedAnnotation)
#: A model sends only the arguments the schema names.
_CONFIG: Final = ConfigDict(extra="forbid")
#: The module an arguments model is made in: where pydantic looks up the names of the
#: string annotations left (``parameters_of``).
_MODULE: Final = "dsh.tools"


def check_name(name: str) -> None:
    """Refuse a tool name the model providers would refuse in every request."""
    if isinstance(name, str) and _NAME.fullmatch(name):
        return
    if not isinstance(name, str) or not name:
        what = "is not a name" if name != "" else "is empty"
    elif len(name) > 64:
        what = f"has {len(name)} characters, more than 64"
    else:
        wrong = sorted({c for c in name if not _NAME.fullmatch(c)})
        what = f"has characters model providers refuse: {' '.join(map(repr, wrong))}"
    raise DshError(
        f"tool {name!r}: the name {what}; a tool name is 1 to 64 letters, digits, _ or - "
        f"({NAME_PATTERN}: OpenAI and Anthropic refuse every request with another)"
    )


class ToolDescriptionWarning(UserWarning):
    """A tool was made without a description (a function without a docstring): the
    model is told only its name and arguments, so it may call it at random, or never."""


def check_description(name: str, description: object) -> None:
    """Warn of a tool the model would be told nothing of but its name and arguments;
    refuse a description that is not text (it would fail every request)."""
    if isinstance(description, str) and description.strip():
        return
    if not isinstance(description, str):
        raise DshError(f"tool {name!r}: its description is {type(description).__name__}, not text")
    warnings.warn(
        f"tool {name!r} has no description: the model is told only its name and "
        "arguments; give the function a docstring, or @tool(description=...)",
        ToolDescriptionWarning,
        stacklevel=_outside_dsh(),
    )


#: The modules making a tool, whose frames a warning's location skips.
_MAKING: Final = frozenset({__name__, "dsh._tool_making"})


def _outside_dsh() -> int:
    """The ``stacklevel`` of the first frame calling into the making of a tool from
    outside it (``@tool`` or ``Tool(...)``; the dataclass ``__init__`` is ``<string>``),
    so that the warning names the author's line, and is shown once for each."""
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and (
        frame.f_globals.get("__name__") in _MAKING or frame.f_code.co_filename == "<string>"
    ):
        frame, level = frame.f_back, level + 1
    return level


#: The names pydantic will not make a field of: its models' settings, and the methods
#: it protects (a field named so is a ValueError). A field shadowing another attribute
#: (``json``, ``schema``, ``copy``) is held as any other: pydantic only warns of it.
_PROTECTED: Final = ("model_validate", "model_dump")


def check_parameter_name(tool: str, name: str) -> None:
    """Refuse a parameter ``name`` that pydantic would not make a plain field of: the
    model would not be told of it, or every call would fail."""
    if name.startswith("_"):
        raise DshError(
            f"tool {tool!r}: parameter {name!r} starts with '_', which pydantic takes for a "
            "private attribute: the model would neither be told of it nor be able to send "
            "it; rename it"
        )
    if name == "model_config" or name.startswith(_PROTECTED):
        what = (
            "its models' settings"
            if name == "model_config"
            else f"its models' own methods (those starting with {' or '.join(_PROTECTED)})"
        )
        raise DshError(
            f"tool {tool!r}: parameter {name!r} is a name pydantic reserves for {what}: the "
            "tool's arguments model could not hold it as an argument; rename it"
        )


def parameters_of(
    function: Callable[..., Any], around: Mapping[str, Any] | None = None
) -> list[inspect.Parameter]:
    """``function``'s parameters, string annotations (``from __future__ import
    annotations``) evaluated one by one in its module's names and ``around`` (the
    names where the tool was made: a type defined in the same function): one that
    cannot be stays a string, for ``arguments_schema`` to name."""
    try:
        signature = inspect.signature(function, locals=around, eval_str=True)
        return list(signature.parameters.values())
    except NameError:  # e.g. a name imported only for type checkers
        pass
    namespace = getattr(inspect.unwrap(function), "__globals__", {})
    params = []
    for param in inspect.signature(function).parameters.values():
        if isinstance(param.annotation, str):
            with contextlib.suppress(Exception):  # left a string: arguments_schema says
                param = param.replace(annotation=eval(param.annotation, namespace, around))
        params.append(param)
    return params


def arguments_model(tool: str, fields: dict[str, Any]) -> type[BaseModel]:
    """The arguments model of ``fields`` (``name: (annotation, default)``); a DshError
    naming the tool and the parameter whose type pydantic cannot check."""
    checked: dict[str, Any] = {n: (refusing_bools(a), d) for n, (a, d) in fields.items()}
    try:  # a string annotation left is looked up in dsh.tools' names, as it always was
        with warnings.catch_warnings():  # a field shadowing BaseModel.json: held all the same
            warnings.filterwarnings("ignore", "Field name .* shadows an attribute", UserWarning)
            return create_model(
                f"{tool}_arguments", __config__=_CONFIG, __module__=_MODULE, **checked
            )
    except _REFUSED as exc:
        raise DshError(_why(tool, {n: a for n, (a, _) in fields.items()}, exc)) from exc


def arguments_schema(tool: str, model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema; a DshError naming the tool and the parameter whose type
    has none (pydantic's error as its cause)."""
    try:
        return model.model_json_schema()
    except _REFUSED as exc:
        annotations = {n: f.annotation for n, f in model.model_fields.items()}
        raise DshError(_why(tool, annotations, exc)) from exc


def _why(tool: str, annotations: Mapping[str, Any], error: PydanticErrorMixin) -> str:
    for name, annotation in annotations.items():
        if isinstance(annotation, str | ForwardRef):
            ref = annotation if isinstance(annotation, str) else annotation.__forward_arg__
            try:  # pydantic looks there too
                annotation = eval(ref, vars(sys.modules[_MODULE]))
            except Exception:
                return (
                    f"tool {tool!r}: parameter {name!r}: its type {ref} is not defined when "
                    "the tool is made (imported only for type checkers? import it at run "
                    "time: the arguments the model sends are checked against it)"
                )
        try:
            create_model("probe", x=(annotation, ...)).model_json_schema()
        except _REFUSED as exc:
            return f"tool {tool!r}: parameter {name!r}: {_reason(annotation, exc)}"
    return f"tool {tool!r}: its arguments have no JSON schema: {_first_line(error)}"


def _reason(annotation: Any, error: PydanticErrorMixin) -> str:
    shown = annotation.__qualname__ if isinstance(annotation, type) else repr(annotation)
    shown = _MODULES.sub("", shown)  # Callable[[int], int], as written
    if isinstance(error, PydanticInvalidForJsonSchema):
        return (
            f"its type {shown} has no JSON schema: a model sends JSON (strings, numbers, "
            "booleans, null, lists, objects; pydantic models and dataclasses of them)"
        )
    if isinstance(error, PydanticSchemaGenerationError):
        return (
            f"pydantic cannot check a value of type {shown}: use JSON types, a pydantic "
            "model or a dataclass of them"
        )
    return _first_line(error)


def _first_line(error: PydanticErrorMixin) -> str:
    return str(error.message).strip().splitlines()[0]


def check_text_arguments(
    tool: str, option: str, names: object, model: type[BaseModel], schema: Mapping[str, Any]
) -> None:
    """``names`` (a tool's ``path_args`` or ``command_args``) name arguments that hold
    text: a str or a path, None, or a list of them, as a policy plugin reads them (one of
    another type would have every call refused, the model told to send it again)."""
    check_names_given(tool, option, names)
    assert isinstance(names, tuple)
    fields = model.model_fields
    unknown = [name for name in names if name not in fields]
    if unknown:  # a policy plugin would look for values that never come
        raise DshError(
            f"tool {tool!r}: {option} names {', '.join(map(repr, unknown))}, "
            f"which {'is not an argument' if len(unknown) == 1 else 'are not arguments'}"
            f" (its arguments: {', '.join(fields) or 'none'})"
        )
    properties = schema.get("properties", {})
    defs = schema.get("$defs", {})
    for name in names:
        annotation = fields[name].annotation
        if _plain_enum(annotation) or not _holds_text(properties.get(name, {}), defs, list_ok=True):
            shown = annotation.__qualname__ if isinstance(annotation, type) else repr(annotation)
            raise DshError(
                f"tool {tool!r}: {option} names {name!r}, whose type {_MODULES.sub('', shown)} "
                "holds no text: such an argument is a str or a Path (or None), or a list "
                "of them"
            )


def check_names_given(tool: str, option: str, names: object) -> None:
    """``path_args="path"`` would name the arguments 'p', 'a', 't' and 'h'."""
    if isinstance(names, str):
        raise DshError(
            f"tool {tool!r}: {option} is the string {names!r}; give a list of argument "
            f"names ({option}=[{names!r}])"
        )


#: The formats of a string schema whose value is a str or a path (``Path``,
#: ``FilePath``, ``DirectoryPath``, ``NewPath``).
_TEXT_FORMATS: Final = frozenset({None, "path", "file-path", "directory-path"})


def _plain_enum(annotation: object) -> bool:
    """Whether ``annotation`` is or holds an ``Enum`` whose members are no str (its
    schema is a string's; its value is the member, which holds no text)."""
    if isinstance(annotation, type):
        return issubclass(annotation, Enum) and not issubclass(annotation, str)
    return any(_plain_enum(arg) for arg in get_args(annotation))


def _holds_text(schema: Mapping[str, Any], defs: Mapping[str, Any], *, list_ok: bool) -> bool:
    """A JSON schema a value of which is text, null or (``list_ok``) a list of text;
    one that says nothing (``Any``) may hold text, and is checked call by call."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _holds_text(defs.get(ref.rsplit("/", 1)[-1], {}), defs, list_ok=list_ok)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return all(_holds_text(branch, defs, list_ok=list_ok) for branch in branches)
    kind = schema.get("type")
    if kind == "string":  # a str, or a path; not bytes, a SecretStr, a date, a URL
        return schema.get("format") in _TEXT_FORMATS
    if kind is None or kind == "null":
        return True
    if kind == "array" and list_ok:
        items = [schema.get("items", {}), *schema.get("prefixItems", ())]
        return all(_holds_text(item, defs, list_ok=False) for item in items)
    return False
