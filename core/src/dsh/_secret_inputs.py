"""The secrets in the input of one error of a settings model: what a validator's own
words may quote (``raise ValueError(f"bad token {v}")``, an ``assert`` with a message),
so that the reason dsh gives has ``***`` in their place. A secret here is a string given
to a field typed ``SecretStr`` or ``SecretBytes`` (however nested: ``list[SecretStr]``,
``SecretStr | None``, a nested model's), or under a key named as a secret's
(``api_key``, ``token``: ``dsh._secrets.is_secret_name``), whatever its type."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any, get_args, get_origin

from pydantic import BaseModel, SecretBytes, SecretStr

from dsh._declared_secrets import revealed
from dsh._nested import every_value
from dsh._secret_names import is_secret_name

__all__ = ["hide_inputs", "secret_inputs"]

_SECRET_TYPES = (SecretStr, SecretBytes)


def hide_inputs(text: str, secrets: set[str]) -> str:
    """``text`` with each of ``secrets`` (longest first, quoted or not; one shorter
    than 4 characters quoted only, not each ``a`` in the words) as ``***``."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(repr(secret), "'***'")
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def secret_inputs(model: type[BaseModel], loc: tuple[str | int, ...], given: Any) -> set[str]:
    """The secrets in ``given``, the input at ``loc`` of ``model`` (an error's)."""
    kinds: list[Any] = [model]
    named = False  # under a key named as a secret's
    for step in loc:
        if isinstance(step, str) and is_secret_name(step, query=False):
            named = True
        kinds = [inner for kind in kinds for inner in _at(kind, step)]
    if named:
        return set(_strings(given))
    return {text for kind in kinds for text in _found(kind, given, 0)}


def _options(kind: Any) -> list[Any]:
    """The types a union (``X | None``, ``Annotated[X, ...]``) may be."""
    origin = get_origin(kind)
    if origin is typing.Union or origin is types.UnionType:
        return [inner for arg in get_args(kind) for inner in _options(arg)]
    if origin is typing.Annotated:
        return _options(get_args(kind)[0])
    return [kind]


def _at(kind: Any, step: str | int) -> list[Any]:
    """The types of the value at ``step`` (a field's name, an index, a key) in one of
    type ``kind``."""
    found: list[Any] = []
    for option in _options(kind):
        if isinstance(option, type) and issubclass(option, BaseModel):
            for name, field in option.model_fields.items():
                if step in (name, field.alias, field.validation_alias):
                    found.append(field.annotation)
            continue
        args = get_args(option)
        origin = get_origin(option)
        if isinstance(origin, type) and issubclass(origin, Mapping) and len(args) == 2:
            found.append(args[1])
        elif origin in (list, tuple, set, frozenset) and args:
            found.extend(arg for arg in args if arg is not Ellipsis)
    return found


def _found(kind: Any, given: Any, depth: int) -> Iterator[str]:
    """The secrets in ``given``, a value of type ``kind``."""
    if depth > 100:  # a recursive model's own type: as deep as the YAML may nest
        return
    options = _options(kind)
    if any(isinstance(o, type) and issubclass(o, _SECRET_TYPES) for o in options):
        yield from _strings(given)
        return
    if isinstance(given, Mapping):
        for key, value in given.items():
            if isinstance(key, str) and is_secret_name(key, query=False):
                yield from _strings(value)
            else:
                for inner in _at(kind, key) if isinstance(key, str | int) else ():
                    yield from _found(inner, value, depth + 1)
    elif isinstance(given, list | tuple | set | frozenset):
        for index, value in enumerate(given):
            for inner in _at(kind, index):
                yield from _found(inner, value, depth + 1)


def _strings(value: Any) -> Iterator[str]:
    """Every string in ``value`` (a ``SecretStr``'s too), at any depth."""
    for item in every_value(value):
        if isinstance(item, SecretStr | SecretBytes):
            yield revealed(item)
        elif isinstance(item, str | bytes):
            text = item if isinstance(item, str) else item.decode("utf-8", "replace")
            if text:
                yield text
