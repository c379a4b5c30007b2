"""Numbers that are not booleans: a tool's ``int`` and ``float`` arguments (also in a
union, a list or a dict) refuse JSON ``true`` and ``false``, which pydantic's lax mode
takes for 1 and 0 (``bash(timeout=true)`` ran with a 1 s timeout). Lax mode stays
otherwise: numbers sent as text (``"5"``), which small models send, are taken. Only
validation changes; the JSON schema the model is told is the same."""

from __future__ import annotations

import collections.abc as abc
from types import UnionType
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

__all__ = ["refusing_bools"]

_NUMBERS: Final = (int, float)
#: The containers whose items are looked into (another generic, a ``Callable``, a
#: ``type[int]``, is left as it is).
_CONTAINERS: Final = frozenset(
    {list, tuple, set, frozenset, dict, abc.Sequence, abc.MutableSequence, abc.Set}
    | {abc.MutableSet, abc.Mapping, abc.MutableMapping, abc.Collection, abc.Iterable}
)


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError(
            "bool_not_number",
            "Input should be a number, not the boolean {value}",
            {"value": "true" if value else "false"},
        )
    return value


_REFUSE: Final = BeforeValidator(_no_bool)


def refusing_bools(annotation: Any) -> Any:
    """``annotation`` with every ``int`` and ``float`` in it refusing booleans; itself
    when it holds none, or takes a ``bool`` where it takes a number (``bool | int``)."""
    if annotation in _NUMBERS:
        return Annotated[annotation, _REFUSE]
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is None or not args or origin is Literal:
        return annotation
    if origin is Annotated:
        metadata = annotation.__metadata__  # kept first: constraints stay in the schema
        if args[0] in _NUMBERS:
            return Annotated[(args[0], *metadata, _REFUSE)]
        inner = refusing_bools(args[0])
        return annotation if inner is args[0] else Annotated[(inner, *metadata)]
    if origin in (Union, UnionType):
        if bool in args:
            return annotation
        members = tuple(refusing_bools(a) if a not in _NUMBERS else a for a in args)
        changed = any(a is not m for a, m in zip(args, members, strict=True))
        union: Any = Union[members] if changed else annotation  # noqa: UP007
        return Annotated[union, _REFUSE] if any(a in _NUMBERS for a in args) else union
    if origin not in _CONTAINERS:
        return annotation
    members = tuple(a if a is Ellipsis else refusing_bools(a) for a in args)
    if all(a is m for a, m in zip(args, members, strict=True)):
        return annotation
    return origin[members]
