"""The one JSON encoding dsh uses: compact UTF-8 (no ASCII escapes), written by
pydantic-core (several times the stdlib encoder) and, for session events, by orjson
(two to three times pydantic-core on event data), whose text is the same for JSON's
own values. The text is the stdlib's, except that small exponents are not zero-padded:
``1e-7`` where the stdlib writes ``1e-07``. pydantic-core reads it back.

Event data must round-trip exactly, so values JSON would silently change are refused
before an event enters the log (``check_json``): NaN and infinities, non-string keys
(JSON turns ``1`` into ``"1"``), tuples (they come back as lists), sets, datetimes,
bytes and any other object; and what could be written but not read back: integers
of more digits than Python converts (``sys.get_int_max_str_digits()``, 4300 by
default) and data nested more than ``MAX_DEPTH`` containers deep. ``encode_any`` does
not refuse them: it writes tool results, where a datetime or a set is fine as its JSON
form.

Strings with lone surrogates (a file name that is not UTF-8, as ``os.listdir`` gives
it; a ``\\udcff`` escape in a model's JSON) cannot be written as UTF-8. They are kept, not
refused or replaced: such a value is written with ASCII escapes (``"caf\\udce9"``, valid
JSON), and ``decode`` reads it back to the same string. The whole value is then
written by the stdlib's encoder, so its floats are the stdlib's (``1e-07``): the same
numbers, read back alike, in other text.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any, Final

import orjson
from pydantic_core import PydanticSerializationError, from_json, to_json

from dsh.errors import EventDataError

__all__ = ["MAX_DEPTH", "check_json", "checked_copy", "copied", "decode", "encode", "encode_any"]

#: How many containers deep event data may nest (the data dict is the first): deeper
#: data could be refused by the encoders (orjson stops at 254) or the call stack.
MAX_DEPTH: Final = 250
# An int beyond 64 bits takes the slow walk, which checks it can be written as digits
_BIG: Final = 2**64

_SCALARS = (str, int, bool, type(None))
# A key written after a dot in a path (data.tool.name); any other is quoted: data["a.b"]
_DOTTED_KEY = re.compile(r"[\w-]+")
# orjson writes JSON's own values as pydantic-core does; what it would write its own
# way (datetimes, dataclasses, subclasses of str or dict) it refuses here.
_OWN_TYPES_ONLY = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def encode(value: Any) -> bytes:
    """UTF-8 JSON of lossless JSON data (``check_json`` passes it): session events.
    (orjson writes NaN as ``null``; such data has none.) Anything orjson refuses
    (lone surrogates, integers beyond 64 bits, other types) is written by
    ``encode_any``."""
    try:
        return orjson.dumps(value, option=_OWN_TYPES_ONLY)
    except TypeError:
        return encode_any(value)


def encode_any(value: Any) -> bytes:
    """UTF-8 JSON of any value, in its JSON form: a set as an array, a datetime as ISO
    text, NaN as ``NaN`` (tool results)."""
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
    try:  # not orjson: it reads integers beyond 64 bits as floats
        return from_json(text)
    except ValueError:
        try:  # the stdlib also reads escaped lone surrogates (see above)
            return json.loads(text)
        except ValueError:
            pass
        raise
    except TypeError:  # a str holding a lone surrogate itself, unreadable as UTF-8
        return json.loads(text)


def copied(value: Any, text: Callable[[str], str] | None = None) -> Any:
    """A copy of lossless JSON ``value`` (``check_json`` passes it) sharing none of its
    dicts and lists (its strings and numbers cannot change; a tuple is copied as a
    list, a subclass of dict or list as a plain one): what a caller keeps and may
    change later (``agents.create``'s ``meta``) is not what the session holds. With
    ``text``, each of its strings (keys too) is ``text(string)`` in the copy. It keeps
    its own list of what is left to copy, not the call stack: a value of any depth
    ``check_json`` passes is copied."""
    top = _empty_like(value)
    if top is None:
        return text(value) if text is not None and isinstance(value, str) else value
    pending: list[tuple[Any, Any]] = [(value, top)]  # a container, its copy to fill
    while pending:
        source, copy = pending.pop()
        in_dict = isinstance(source, dict)
        entries: Iterable[tuple[Any, Any]] = source.items() if in_dict else enumerate(source)
        for key, item in entries:
            inner = _empty_like(item)
            if inner is not None:
                pending.append((item, inner))
                item = inner
            elif text is not None and isinstance(item, str):
                item = text(item)
            copy[text(key) if in_dict and text is not None else key] = item
    return top


def _empty_like(value: Any) -> dict[str, Any] | list[Any] | None:
    """A new dict, or a list of as many Nones, to fill for a dict or list ``value`` (or
    a tuple, which JSON writes as a list; or a subclass of one, copied as a plain dict
    or list: a third-party store's ``load`` may give any of them back in an event's
    data, an ``OrderedDict`` or a namedtuple, and its strings are as much to clear);
    None for anything else."""
    if isinstance(value, dict):
        return {}
    return [None] * len(value) if isinstance(value, list | tuple) else None


class _NotPlain(Exception):
    """``_copy`` met something that may not be lossless JSON (``_explain`` says what)."""


def _copy(value: Any, depth: int) -> Any:
    """A copy of ``value`` (as ``copied``), walking it once; ``_NotPlain`` when it may not
    be lossless JSON (an int beyond 64 bits: ``_explain`` decides). ``depth``: how many
    containers deeper it may nest.

    The hot path of ``Session.emit``, so it is written for the fewest bytecodes per item:
    a dict or list is copied whole by C (``dict.copy``), and the walk only checks its
    items, replacing in the copy the dicts and lists it holds (by their copies; an empty
    one by a new one, without a call). Strings, bools, None and 64-bit ints are shared:
    they cannot change."""
    kind = type(value)
    if kind is dict:
        if depth <= 0:
            raise _NotPlain
        out: dict[str, Any] = value.copy()
        for key, item in out.items():  # replacing a value keeps the dict's size: safe
            if type(key) is not str:
                raise _NotPlain
            kind = type(item)
            # (the bounds are constants: 2**64 is folded when compiled; _BIG is not)
            if (
                kind is str
                or item is None
                or kind is bool
                or (kind is int and -(2**64) < item < 2**64)
            ):
                continue
            if kind is dict or kind is list:
                out[key] = _copy(item, depth - 1) if item or depth < 2 else kind()
            elif kind is not float or not math.isfinite(item):
                raise _NotPlain
        return out
    if kind is list:
        if depth <= 0:
            raise _NotPlain
        items: list[Any] = value.copy()
        for index, item in enumerate(items):
            kind = type(item)
            if (
                kind is str
                or item is None
                or kind is bool
                or (kind is int and -(2**64) < item < 2**64)
            ):
                continue
            if kind is dict or kind is list:
                items[index] = _copy(item, depth - 1) if item or depth < 2 else kind()
            elif kind is not float or not math.isfinite(item):
                raise _NotPlain
        return items
    if kind is str or kind is bool or value is None or (kind is int and -_BIG < value < _BIG):
        return value
    if kind is float and math.isfinite(value):
        return value
    raise _NotPlain


def checked_copy(value: Any, event_type: str, path: str = "data") -> Any:
    """A copy of ``value`` sharing none of its dicts and lists (as ``copied``), built in
    the walk that checks it: EventDataError (naming ``path``) if it is not lossless
    JSON. What a plugin hands ``Session.emit`` and changes later is not in the log."""
    try:
        return _copy(value, MAX_DEPTH)
    except (_NotPlain, RecursionError):  # RecursionError: the caller's stack is deep
        pass
    check_json(value, event_type, path, fast=False)
    return copied(value)  # lossless after all: integers beyond 64 bits


def check_json(value: Any, event_type: str, path: str = "data", *, fast: bool = True) -> None:
    """Raise EventDataError (naming ``path``) if ``value`` is not lossless JSON."""
    if fast:
        try:
            if _is_plain(value, MAX_DEPTH):
                return
        except RecursionError:  # the caller's stack is deep already: the slow walk says
            pass
    try:
        _explain(value, event_type, path, set(), MAX_DEPTH)
    except RecursionError:
        raise EventDataError(event_type, path, "it nests too deeply to be JSON") from None


def _is_plain(value: Any, depth: int) -> bool:
    """Fast walk without paths or copies: True when ``value`` is lossless JSON (False:
    it may not be; an int beyond 64 bits, which ``_explain`` decides)."""
    kind = type(value)
    if kind is dict:
        if depth <= 0:
            return False
        for key, item in value.items():
            if type(key) is not str:
                return False
            kind = type(item)
            if not (
                kind is str or kind is bool or item is None or (kind is int and -_BIG < item < _BIG)
            ) and not _is_plain(item, depth - 1):
                return False
        return True
    if kind is list:
        if depth <= 0:
            return False
        for item in value:
            kind = type(item)
            if not (
                kind is str or kind is bool or item is None or (kind is int and -_BIG < item < _BIG)
            ) and not _is_plain(item, depth - 1):
                return False
        return True
    if kind is str or kind is bool or value is None or (kind is int and -_BIG < value < _BIG):
        return True
    return kind is float and math.isfinite(value)


def _explain(value: Any, event_type: str, path: str, open_: set[int], depth: int) -> None:
    # The slow walk, only on failure: it knows where it is (``open_``: the containers
    # it is inside, so one met again is a value that contains itself).
    kind = type(value)
    if (kind is dict or kind is list) and id(value) in open_:
        raise EventDataError(event_type, path, "the value contains itself")
    if (kind is dict or kind is list) and depth <= 0:
        reason = f"it nests more than {MAX_DEPTH} lists and dicts deep"
        raise EventDataError(event_type, path, reason)
    if kind is int and not -_BIG < value < _BIG:
        try:
            str(value)
        except ValueError:  # more digits than int() reads back (sys.set_int_max_str_digits)
            limit = sys.get_int_max_str_digits()
            reason = f"an int of more than {limit} digits cannot be read back"
            raise EventDataError(event_type, path, reason) from None
        return
    if kind in _SCALARS:
        return
    if kind is float:
        if not math.isfinite(value):
            raise EventDataError(event_type, path, f"{value!r} is not representable in JSON")
        return
    if kind is dict:
        open_.add(id(value))
        for key, item in value.items():
            if type(key) is not str:
                raise EventDataError(
                    event_type, path, f"key {key!r} is a {type(key).__name__}, not a str"
                )
            step = f".{key}" if _DOTTED_KEY.fullmatch(key) else f"[{json.dumps(key)}]"
            _explain(item, event_type, path + step, open_, depth - 1)
        open_.discard(id(value))
        return
    if kind is list:
        open_.add(id(value))
        for index, item in enumerate(value):
            _explain(item, event_type, f"{path}[{index}]", open_, depth - 1)
        open_.discard(id(value))
        return
    raise EventDataError(
        event_type, path, f"{kind.__name__} values are not lossless JSON (got {value!r:.80})"
    )
