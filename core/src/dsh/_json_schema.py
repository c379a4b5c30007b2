"""The JSON Schema of a schema tool (``dsh.tools.schema_tool``), on the ``jsonschema``
library: dsh-core's ``schema`` extra, imported when the first such tool is made (not
with ``dsh``). The schema is checked against its draft's metaschema (2020-12 unless its
``$schema`` names another) and each ``$ref`` in it must be resolved within it: nothing
is ever fetched. A call's arguments are checked against it and each problem worded
briefly for the model (``problems``). ``pattern`` and the patterns of
``patternProperties`` run on grep's engine, ``regex``, with a time limit per call:
jsonschema's ``re`` holds the GIL for a whole match, so a pattern that backtracks
catastrophically on what a model sent would freeze the event loop."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from dsh._json_schema_words import TOO_SLOW, clipped, json_preview, problem_words
from dsh.errors import DshError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["PATTERN_SECONDS", "has_patterns", "load_validator", "problems"]

INSTALL: Final = "pip install 'dsh-core[schema]'"
#: How long the patterns of one call's arguments may take in all: what matches are
#: left then are refused, said so (the event loop waits while a pattern matches).
PATTERN_SECONDS = 0.5
#: The most problems one call's arguments are refused with.
SHOWN: Final = 10
_DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"
_NONE: Final[Any] = None  # validator_for's default: no draft
_DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("dsh_schema_deadline")


def load_validator(tool: str, schema: dict[str, Any]) -> Validator:
    """A validator of ``schema`` (lossless JSON, a dict), which is checked first: a
    DshError naming the tool and the place in the schema when it is not a schema, or a
    ``$ref`` in it points outside it; one saying to install the extra without it."""
    try:
        import referencing
        from jsonschema import validators
        from jsonschema.exceptions import best_match
    except ImportError as exc:
        raise DshError(
            f"tool {tool!r}: a tool from a JSON schema needs the jsonschema library, "
            f"which dsh-core's 'schema' extra installs: {INSTALL}"
        ) from exc
    import regex

    dialect = schema.get("$schema", _DRAFT_2020_12)
    known = isinstance(dialect, str)
    draft = validators.validator_for({"$schema": dialect}, default=_NONE) if known else None
    if draft is None:
        raise DshError(
            f"tool {tool!r}: its schema's $schema is {clipped(repr(dialect), 80)}, which "
            "names no JSON Schema draft known here (2020-12, 2019-09, 7, 6, 4 or 3)"
        )
    meta = draft(draft.META_SCHEMA, format_checker=_regex_format(regex))
    found = best_match(meta.iter_errors(schema))
    if found is not None:
        raise DshError(
            f"tool {tool!r}: its schema at {_pointer(found.absolute_path)}: "
            f"{clipped(found.message, 200)}"
        )
    _check_refs(tool, schema, dialect)
    keywords = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    if "unevaluatedProperties" in draft.VALIDATORS:  # 2019-09 on
        patterns = sorted(_patterns_of(schema))
        original = draft.VALIDATORS["unevaluatedProperties"]
        keywords["unevaluatedProperties"] = _unevaluated(original, patterns)
    kind = validators.extend(draft, keywords)  # type: ignore[no-untyped-call]
    made: Validator = kind(schema, registry=referencing.Registry())  # retrieves nothing
    return made


def problems(validator: Validator, arguments: dict[str, Any]) -> list[str]:
    """What is wrong with ``arguments`` by ``validator``'s schema, each saying where
    (at most ``SHOWN``, then ``and more``); none when they fit."""
    from referencing.exceptions import Unresolvable

    said: list[str] = []
    token = _DEADLINE.set(time.monotonic() + PATTERN_SECONDS)
    try:
        for error in validator.iter_errors(arguments):
            words = problem_words(error)
            if words is None or words in said:
                continue
            if len(said) == SHOWN:
                said.append("and more")
                break
            said.append(words)
    except RecursionError:  # a $ref loop that never reaches a value, or a deep value
        said.append("(arguments): too deeply nested to check (a $ref loop in the schema?)")
    except Unresolvable as exc:  # found when the tool was made: $dynamicRef, say
        said.append(f"(arguments): the schema's {clipped(str(exc), 120)}")
    finally:
        _DEADLINE.reset(token)
    return said


def _regex_format(regex: Any) -> Any:
    """A format checker of the metaschema's ``regex`` format (a schema's patterns) by
    ``regex``'s syntax, which the patterns run on (``\\p{L}`` too), and no other."""
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    checker.checks("regex", raises=regex.error)(lambda text: regex.compile(text) or True)
    return checker


def _searched(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` is found in ``text``; None when this call's time for its
    patterns is up first. The GIL is released while it matches (``concurrent``)."""
    import regex

    left = _DEADLINE.get(time.monotonic() + PATTERN_SECONDS) - time.monotonic()
    if left <= 0:
        return None
    try:
        return regex.search(pattern, text, concurrent=True, timeout=left) is not None
    except TimeoutError:
        return None


def _slow(pattern: str, text: str) -> Any:
    from jsonschema.exceptions import ValidationError

    return ValidationError(
        f"{json_preview(text)} could not be matched against the pattern "
        f"{json_preview(pattern, 60)} in "
        f"time ({PATTERN_SECONDS} s for all of a call's patterns)",
        validator_value=TOO_SLOW,
    )


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    found = _searched(pattern, instance)
    if found is None:
        yield _slow(pattern, instance)
    elif not found:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, properties: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            found = _searched(pattern, key)
            if found is None:
                yield _slow(pattern, key)
            elif found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's ``additionalProperties``, with the ``patternProperties`` beside it
    matched by ``_searched`` (jsonschema's own matches them with ``re``). The error of
    properties not allowed has them alone as its instance, for ``problem_words``."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = []
    for key in instance:
        if key in properties:
            continue
        found = [_searched(pattern, key) for pattern in patterns]
        if None in found:
            return  # said by patternProperties
        if not any(found):
            extras.append(key)
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        yield ValidationError(
            f"{', '.join(map(repr, extras))} not allowed", instance={k: instance[k] for k in extras}
        )


def _unevaluated(original: Any, patterns: list[str]) -> Any:
    """jsonschema's ``unevaluatedProperties``, which matches the patterns of the
    ``patternProperties`` it reaches with ``re``: run when ``_searched`` has matched each
    of the schema's against each property first, in time (a key that would backtrack
    catastrophically is said so instead)."""

    def unevaluated(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if patterns and validator.is_type(instance, "object"):
            for key in instance:
                for pattern in patterns:
                    if _searched(pattern, key) is None:
                        yield _slow(pattern, key)
                        return
        yield from original(validator, value, instance, schema)

    return unevaluated


def has_patterns(schema: Any) -> bool:
    """Whether ``schema`` has a ``pattern`` or ``patternProperties`` anywhere: its
    checks may then take up to ``PATTERN_SECONDS`` (a property named so is not one)."""
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if isinstance(item.get("pattern"), str) or item.get("patternProperties"):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _patterns_of(schema: Any) -> set[str]:
    """The patterns of every ``patternProperties`` in ``schema``, wherever it is."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if isinstance(item.get("patternProperties"), Mapping):
                found.update(k for k in item["patternProperties"] if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _check_refs(tool: str, schema: dict[str, Any], dialect: str) -> None:
    """Refuse a ``$ref`` (or ``$dynamicRef``) in ``schema`` that no part of it (or a
    draft's metaschema) resolves: dsh fetches no schema from elsewhere, URL or file."""
    import referencing.jsonschema
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]
    from referencing.exceptions import Unresolvable

    spec = referencing.jsonschema.specification_with(
        dialect, default=referencing.jsonschema.DRAFT202012
    )
    resource = spec.create_resource(schema)
    root = REGISTRY.combine(referencing.Registry()).resolver_with_root(resource)
    stack = [(root, resource, "#")]
    while stack:
        resolver, resource, at = stack.pop()
        contents = resource.contents
        for keyword in ("$ref", "$dynamicRef", "$recursiveRef"):
            ref = contents.get(keyword) if isinstance(contents, Mapping) else None
            if not isinstance(ref, str):
                continue
            try:
                resolver.lookup(ref)
            except Unresolvable:
                raise DshError(
                    f"tool {tool!r}: its schema at {at}: {keyword} {ref!r} points to nothing "
                    "in the schema (dsh fetches no schema from elsewhere: put what it names "
                    "under $defs)"
                ) from None
        for sub in resource.subresources():
            stack.append((resolver.in_subresource(sub), sub, _within(contents, sub, at)))


def _within(contents: Any, sub: Any, at: str) -> str:
    """Where ``sub`` is in ``contents`` (one or two keys down), as a JSON pointer."""
    if not isinstance(contents, Mapping):
        return at
    for key, value in contents.items():
        if value is sub.contents:
            return f"{at}/{key}"
        if isinstance(value, Mapping | list):
            inner = value.items() if isinstance(value, Mapping) else enumerate(value)
            for name, item in inner:
                if item is sub.contents:
                    return f"{at}/{key}/{name}"
    return at


def _pointer(path: Any) -> str:
    return "/".join(["#", *(str(part) for part in path)])
