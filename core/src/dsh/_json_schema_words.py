"""What jsonschema found wrong with a schema tool's arguments, in words for the model:
where (``tags.1``, ``(arguments)`` for the whole), then what, briefly, with what the
model sent shown as it sent it (JSON, clipped), not as a Python repr or a template."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

__all__ = ["TOO_SLOW", "clipped", "json_preview", "problem_words"]

#: The most characters of a value (or a list of them) a problem shows.
PREVIEW: Final = 40
_LIST: Final = 80
#: The ``validator_value`` of a pattern's error when it was not decided in time.
TOO_SLOW: Final = object()


def clipped(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def json_preview(value: Any, most: int = PREVIEW) -> str:
    """``value`` as JSON, as the model sent it, clipped to ``most`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):  # not from JSON: a schema's own value, say
        text = repr(value)
    return clipped(text, most)


def _where(path: Iterable[Any]) -> str:
    return ".".join(map(str, path)) or "(arguments)"


def _listed(values: Iterable[Any]) -> str:
    return clipped(", ".join(json_preview(v) for v in values), _LIST)


def problem_words(error: Any) -> str | None:
    """``where: what`` for one of jsonschema's ``ValidationError``; None for one that
    repeats another (a ``required`` error is said for all its missing properties)."""
    keyword = error.validator
    path = list(error.absolute_path)
    if error.validator_value is TOO_SLOW:
        return f"{_where(path)}: {error.message}"
    if keyword == "required":
        missing = [p for p in error.validator_value if p not in error.instance]
        return "; ".join(f"{_where([*path, p])}: required, and missing" for p in missing)
    if keyword == "additionalProperties":  # those it refuses (dsh._json_schema's)
        return _not_allowed(path, error.instance, error.schema)
    if error.schema is False:  # jsonschema does not say where (descend drops the path)
        where = f"{_where(path)}: " if path else ""
        return f"{where}{json_preview(error.instance)} is not allowed there (its schema is false)"
    if keyword == "oneOf":  # none fits: the errors of each are its context
        which = "none" if error.context else "more than one"
        return f"{_where(path)}: {json_preview(error.instance)} fits {which} of the schemas (oneOf)"
    said = _WORDS.get(keyword)
    if said is None:
        return f"{_where(path)}: {clipped(error.message, 160)}"
    return f"{_where(path)}: {said(error.instance, error.validator_value, error.schema)}"


def _not_allowed(path: list[Any], extras: Mapping[str, Any], schema: Any) -> str:
    names = list(schema.get("properties", {})) if isinstance(schema, Mapping) else []
    many = len(extras) > 1
    if path:
        what = f"{'are' if many else 'is'} not allowed here"
    else:
        what = "are not arguments of this tool" if many else "is not an argument of this tool"
    known = clipped(", ".join(names), _LIST) if names else "none"
    which = "properties" if path else "arguments"
    return f"{_where(path)}: {_listed(extras)} {what} (its {which}: {known})"


def _bound(more: str, exclusive: str) -> Callable[[Any, Any, Any], str]:
    """A minimum's or maximum's words; draft 4's boolean ``exclusive...`` too."""

    def said(value: Any, bound: Any, schema: Any) -> str:
        if isinstance(schema, Mapping) and schema.get(exclusive) is True:
            return f"{json_preview(value)} is not {more} than {bound}"
        limit = "minimum" if more == "more" else "maximum"
        than = "less" if more == "more" else "more"
        return f"{json_preview(value)} is {than} than the {limit} {bound}"

    return said


def _type(value: Any, types: Any, _: Any) -> str:
    kinds = types if isinstance(types, list) else [types]
    return f"{json_preview(value)} is not of type {' or '.join(repr(k) for k in kinds)}"


def _pattern(value: Any, pattern: Any, _: Any) -> str:
    return f"{json_preview(value)} does not match the pattern {json_preview(pattern, _LIST)}"


_WORDS: Final[dict[str, Callable[[Any, Any, Any], str]]] = {
    "type": _type,
    "enum": lambda v, values, _: f"{json_preview(v)} is not one of {_listed(values)}",
    "const": lambda v, const, _: f"{json_preview(v)} is not {json_preview(const)}",
    "minLength": lambda v, n, _: f"shorter than {n} characters",
    "maxLength": lambda v, n, _: f"longer than {n} characters",
    "minimum": _bound("more", "exclusiveMinimum"),
    "maximum": _bound("less", "exclusiveMaximum"),
    "exclusiveMinimum": lambda v, n, _: f"{json_preview(v)} is not more than {n}",
    "exclusiveMaximum": lambda v, n, _: f"{json_preview(v)} is not less than {n}",
    "multipleOf": lambda v, n, _: f"{json_preview(v)} is not a multiple of {n}",
    "pattern": _pattern,
    "minItems": lambda v, n, _: f"{len(v)} items, fewer than {n}",
    "maxItems": lambda v, n, _: f"{len(v)} items, more than {n}",
    "uniqueItems": lambda v, n, _: "an item is there more than once",
    "minProperties": lambda v, n, _: f"fewer than {n} properties",
    "maxProperties": lambda v, n, _: f"more than {n} properties",
    "anyOf": lambda v, _, __: f"{json_preview(v)} fits none of the schemas (anyOf)",
    "not": lambda v, _, __: f"{json_preview(v)} fits the schema 'not' refuses",
}
