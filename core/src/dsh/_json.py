"""The one JSON encoding dsh uses: compact UTF-8 (no ASCII escapes), written and read
by pydantic-core (five times the stdlib encoder, four times ``json.loads`` on event
lines; the text is the stdlib's, except that small exponents are not zero-padded:
``1e-7`` where the stdlib writes ``1e-07``).

Event data must round-trip exactly, so values JSON would silently change are refused
before an event enters the log (``check_json``): NaN and infinities, non-string keys
(JSON turns ``1`` into ``"1"``), tuples (they come back as lists), sets, datetimes,
bytes and any other object. ``encode`` itself does not refuse them: it also writes tool
results, where a datetime or a set is fine as its JSON form.

Strings with lone surrogates (a file name that is not UTF-8, as ``os.listdir`` gives
it; a ``\\udcff`` escape in a model's JSON) cannot be written as UTF-8. They are kept, not
refused or replaced: such a value is written with ASCII escapes (``"caf\\udce9"``, valid
JSON), and ``decode`` reads it back to the same string.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic_core import PydanticSerializationError, from_json, to_json

from dsh.errors import EventDataError

__all__ = ["check_json", "decode", "encode"]

_SCALARS = (str, int, bool, type(None))


def encode(value: Any) -> bytes:
    """UTF-8 JSON of ``value``. For event data, ``check_json`` it first: what it refuses
    is written here without complaint (a set as an array, NaN as ``NaN``)."""
    try:
        return to_json(value)
    except PydanticSerializationError:
        # lone surrogates (see above); anything else fails here again, in _jsonable
        return json.dumps(
            value, ensure_ascii=True, separators=(",", ":"), default=_jsonable
        ).encode()


def _jsonable(value: Any) -> Any:
    return from_json(to_json(value))


def decode(text: str | bytes) -> Any:
    """The value of JSON ``text``."""
    try:
        return from_json(text)
    except ValueError:
        try:  # the stdlib also reads escaped lone surrogates (see above)
            return json.loads(text)
        except ValueError:
            pass
        raise


def _is_plain(value: Any) -> bool:
    """Fast walk without paths: True when ``value`` is lossless JSON."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            kind = type(item)
            if not (kind is str or kind is int or kind is bool or item is None) and not (
                _is_plain(item)
            ):
                return False
        return True
    if kind is list:
        for item in value:
            kind = type(item)
            if not (kind is str or kind is int or kind is bool or item is None) and not (
                _is_plain(item)
            ):
                return False
        return True
    return False


def check_json(value: Any, event_type: str, path: str = "data") -> None:
    """Raise EventDataError (naming ``path``) if ``value`` is not lossless JSON."""
    if not _is_plain(value):
        _explain(value, event_type, path)


def _explain(value: Any, event_type: str, path: str) -> None:
    # The slow walk, only on failure: it knows where it is.
    kind = type(value)
    if kind in _SCALARS:
        return
    if kind is float:
        if not math.isfinite(value):
            raise EventDataError(event_type, path, f"{value!r} is not representable in JSON")
        return
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                raise EventDataError(
                    event_type, path, f"key {key!r} is a {type(key).__name__}, not a str"
                )
            _explain(item, event_type, f"{path}.{key}")
        return
    if kind is list:
        for index, item in enumerate(value):
            _explain(item, event_type, f"{path}[{index}]")
        return
    raise EventDataError(
        event_type, path, f"{kind.__name__} values are not lossless JSON (got {value!r:.80})"
    )
