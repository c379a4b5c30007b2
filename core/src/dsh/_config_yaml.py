"""Reading ``dsh.yml``: YAML to a node tree kept for line numbers, key checks, and the
one problem a load reports (file, line, column, key path, reason)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dsh import _pipes
from dsh._quoted import SHOWN_CHARS, shown
from dsh.errors import ConfigError

try:  # libyaml's parser is several times faster; the constructor stays the safe one
    from yaml import CSafeLoader as _Loader

    _LIBYAML = True
except ImportError:  # pragma: no cover - pyyaml built without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

    _LIBYAML = False

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_VALUES",
    "AtKey",
    "Loc",
    "Problem",
    "check_keys",
    "check_size",
    "format_path",
    "parse",
    "read",
]

Loc = tuple[str | int, ...]
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class AtKey(ValueError):
    """A validator's reason that concerns one key under the value it validates (a header
    of ``headers:``): ``loc`` is the key's path from there, added to the error's place."""

    def __init__(self, loc: Loc, reason: str) -> None:
        super().__init__(reason)
        self.loc = loc


#: The bytes a config file may hold: far above any real config; what is past it is not
#: read (``-c /dev/zero``, a log given by mistake).
MAX_FILE_BYTES = 1 << 20


#: A config file's reason when it does not exist (the CLI adds how -c is resolved).
NOT_FOUND = "file not found"


def _absolute(path: str | os.PathLike[str]) -> str:
    """Where a relative path was looked for (the current directory's), said."""
    given = Path(path)
    return "" if given.is_absolute() else f" (looked for {given.absolute()})"


def read(path: str | os.PathLike[str], source: str) -> str:
    """The file's text, its line ends ``\\n`` (as Python's text mode reads them); a pipe's
    or a FIFO's read once in a ``dsh`` command (``_pipes``). At most ``MAX_FILE_BYTES``
    are read: a longer file is refused without reading the rest."""
    kept, key = _pipes.TEXTS, os.fspath(path)
    if kept is not None and key in kept:
        return kept[key]
    try:
        with Path(path).open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            limit = f"{MAX_FILE_BYTES // 1024**2} MiB"
            reason = f"larger than {limit}, the most a config file may hold; is it the right file?"
            raise ConfigError(source, "", reason)
        text = data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
        if kept is not None and not Path(path).is_file():
            kept[key] = text
        return text
    except FileNotFoundError:
        raise ConfigError(source, "", NOT_FOUND + _absolute(path)) from None
    except UnicodeDecodeError as exc:
        # the text before the byte is UTF-8; a byte order mark is not in exc.object
        before = exc.object[: exc.start].decode().replace("\r\n", "\n").replace("\r", "\n")
        line, column = before.count("\n") + 1, len(before) - before.rfind("\n")
        byte = exc.start + len(data) - len(exc.object)
        reason = f"not UTF-8 text: {exc.reason} at byte {byte}"
        raise ConfigError(f"{source}:{line}:{column}", "", reason) from exc
    except OSError as exc:
        raise ConfigError(source, "", f"cannot read: {exc.strerror or exc}") from exc


def _at(text: str, line: int, column: int) -> str:
    """The character at ``line``, ``column`` (from 0) of ``text``; "" past its end."""
    lines = text.split("\n")
    return lines[line][column : column + 1] if line < len(lines) else ""


def parse(
    text: str, source: str, duplicates: list[Problem] | None = None
) -> tuple[Node | None, Any]:
    """Compose the node tree (kept for line numbers), check its keys, then construct.
    A key that is not a string, or one met twice, is refused with every other such key;
    ``duplicates`` given: keys met twice (and nothing else wrong with the keys) are put
    there instead, to be reported with what else is wrong (YAML keeps the last)."""
    loader: _Loader | None = None
    try:
        loader = _Loader(text)  # the pure-Python reader checks characters here
        node = loader.get_single_node()
        if node is None:
            return None, None
        check_size(node, source)  # first: check_keys recurses as deep as the file nests
        twice: list[Problem] = []
        odd: list[Problem] = []
        check_keys(node, (), set(), twice, odd)
        if odd or (twice and duplicates is None):
            first, *rest = sorted([*odd, *twice])
            raise first.error(source, [p.error(source) for p in rest])
        if duplicates is not None:
            duplicates += twice
        try:
            return node, loader.construct_document(node)
        except _UNREADABLE as exc:  # a scalar of a bad value
            raise _unreadable(node, exc).error(source) from exc
    except yaml.MarkedYAMLError as exc:
        mark, reason = exc.problem_mark or exc.context_mark, f"invalid YAML: {exc.problem}"
        if exc.context and exc.context_mark:
            at = exc.context_mark
            where = f"line {at.line + 1}, column {at.column + 1}"
            reason = f"invalid YAML: {exc.context} at {where}, {exc.problem}"
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        if mark is not None and _at(text, mark.line, mark.column) == "\t":
            reason += " (a tab: YAML indents with spaces only)"
        raise ConfigError(where, "", reason) from exc
    except yaml.reader.ReaderError as exc:
        # libyaml counts bytes of the UTF-8 text, the pure-Python reader characters
        before = text.encode()[: exc.position].decode() if _LIBYAML else text[: exc.position]
        line, column = before.count("\n") + 1, len(before) - before.rfind("\n")
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        reason = f"invalid YAML: character #x{char:04x} is not allowed ({exc.reason})"
        raise ConfigError(f"{source}:{line}:{column}", "", reason) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(source, "", f"invalid YAML: {exc}") from exc
    finally:
        if loader is not None:
            loader.dispose()


def _unreadable(root: Node, error: Exception) -> Problem:
    """Where the constructor failed: the first scalar, in file order, that a fresh
    constructor refuses too (``2001-13-45`` read as a date, ``!!int abc``)."""
    stack: list[tuple[Node, Loc]] = [(root, ())]
    seen: set[int] = set()
    while stack:
        node, loc = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            try:
                yaml.SafeLoader("").construct_object(node)
            except (*_UNREADABLE, yaml.YAMLError) as exc:
                # ValueError's words say why (month 13); a KeyError's ('maybe'), not
                said = f" ({_words(exc)})" if isinstance(exc, ValueError | OverflowError) else ""
                reason = f"invalid YAML: {shown(node.value)} cannot be read as {_kind(node)}{said}"
                at = node.start_mark
                return Problem(at.line + 1, at.column + 1, format_path(loc), reason)
        elif isinstance(node, SequenceNode):
            stack.extend((item, (*loc, i)) for i, item in reversed(list(enumerate(node.value))))
        elif isinstance(node, MappingNode):
            for key, value in reversed(node.value):
                stack.append((value, (*loc, key.value if isinstance(key, ScalarNode) else "?")))
                stack.append((key, loc))
    at = root.start_mark
    return Problem(at.line + 1, at.column + 1, "", f"invalid YAML: {error}")


def _words(error: Exception) -> str:
    """Why the constructor refused a value, in its words cut short (they may quote the
    value whole); a number too large in words of the reader (not Python's advice)."""
    words = str(error)
    if "int_max_str_digits" in words:
        return "a number too large"
    return words if len(words) <= 2 * SHOWN_CHARS else f"{words[: 2 * SHOWN_CHARS]}..."


#: What the safe constructor raises for a scalar it cannot read: ``2001-13-45`` and
#: ``!!int abc`` a ValueError, ``!!bool maybe`` a KeyError, ``!!timestamp soon`` an
#: AttributeError (its pattern does not match).
_UNREADABLE = (ValueError, TypeError, OverflowError, KeyError, AttributeError)

#: The kinds YAML reads a scalar as (by tag), other than a string, in the words
#: ``_config_errors.yaml_kind`` gives values (a timestamp: ``_kind``).
_KINDS = {
    "bool": "a boolean",
    "int": "a number",
    "float": "a number",
    "null": "null",
    "binary": "binary data",  # !!binary
    "value": "YAML's value key (=)",  # a plain = is YAML 1.1's value key type
}


def _kind(node: Node) -> str:
    """What YAML reads ``node`` as, in ``_KINDS``'s words. A timestamp is a date, or a
    date and time when it has an hour, as the safe constructor tells them apart (a
    ``datetime.date`` or a ``datetime``), and as ``yaml_kind`` names the value."""
    if isinstance(node, SequenceNode | MappingNode):  # a complex key
        return "a list" if isinstance(node, SequenceNode) else "a mapping"
    tag = node.tag.rsplit(":", 1)[-1]
    if tag == "timestamp":
        read = yaml.constructor.SafeConstructor.timestamp_regexp.match(node.value)
        return "a date" if read is not None and read["hour"] is None else "a date and time"
    return _KINDS.get(tag, tag)


def check_keys(
    node: Node, loc: Loc, seen: set[int], duplicates: list[Problem], odd: list[Problem]
) -> None:
    """Every mapping key is a string (``odd``: each that is not) and appears once
    (``duplicates``: each met again; YAML would keep the last). All are found."""
    if id(node) in seen:  # an alias: already checked where its anchor is
        return
    seen.add(id(node))
    items = enumerate(node.value) if isinstance(node, SequenceNode) else ()
    for i, item in items:
        check_keys(item, (*loc, i), seen, duplicates, odd)
    first: dict[str, int] = {}
    for key, value in node.value if isinstance(node, MappingNode) else ():
        if key.tag == _MERGE_TAG:
            check_keys(value, loc, seen, duplicates, odd)
            continue
        at = key.start_mark
        if not isinstance(key, ScalarNode) or key.tag != _STR_TAG:
            shown = key.value if isinstance(key, ScalarNode) else "?"
            reason = f"keys must be strings, this one is read as {_kind(key)}; quote it"
            odd.append(Problem(at.line + 1, at.column + 1, format_path((*loc, shown)), reason))
            continue
        if key.value in first:
            reason = f"duplicate key (first on line {first[key.value]})"
            path = format_path((*loc, key.value))
            duplicates.append(Problem(at.line + 1, at.column + 1, path, reason))
        else:
            first[key.value] = at.line + 1
        check_keys(value, (*loc, key.value), seen, duplicates, odd)


#: Values a document may expand to once its aliases are followed: far above any real
#: config, far below what makes walking it (validation, the session meta) take long.
MAX_VALUES = 100_000
#: Lists and mappings a value may nest, aliases followed: far above any real config, far
#: below what the recursive walks after the load (validation, JSON) can follow.
MAX_DEPTH = 100


def check_size(root: Node, source: str) -> None:
    """Refuse a document whose aliases expand it past ``MAX_VALUES`` values (nested
    aliases can double it at every level: a few lines can stand for billions), a value
    that contains itself, or one nested deeper than ``MAX_DEPTH``. Walked without
    recursion, each node once: before any walk that recurses (``check_keys``)."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}  # the lists and mappings nested in a node, itself included
    open_: set[int] = set()  # the nodes being measured: one met again contains itself
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, measured = stack.pop()
        if measured:
            inner = _inner(node)
            total = 1 + sum(sizes[id(item)] for item in inner)
            sizes[id(node)] = min(total, MAX_VALUES + 1)
            nested = max((depths[id(item)] for item in inner), default=0)
            depths[id(node)] = nested + (not isinstance(node, ScalarNode))
            open_.discard(id(node))
        elif id(node) in open_:
            at = node.start_mark
            reason = (
                "this value contains itself (an alias inside its own anchor); "
                "a config value cannot be recursive"
            )
            raise Problem(at.line + 1, at.column + 1, "", reason).error(source)
        elif id(node) not in sizes:
            open_.add(id(node))
            stack.append((node, True))
            stack.extend((item, False) for item in reversed(_inner(node)))
    if sizes[id(root)] > MAX_VALUES:
        reason = (
            f"its aliases expand it to more than {MAX_VALUES:,} values; "
            "a config needs far fewer (aliases nested inside aliases?)"
        )
        raise Problem(1, 1, "", reason).error(source)
    if depths[id(root)] > MAX_DEPTH:
        raise _too_deep(root, depths).error(source)


def _inner(node: Node) -> list[Node]:
    """The nodes right inside ``node``: a list's items, a mapping's keys and values."""
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _too_deep(root: Node, depths: dict[int, int]) -> Problem:
    """Where the first value nested past ``MAX_DEPTH`` is, in file order."""
    node: Node = root
    loc: Loc = ()
    for _ in range(MAX_DEPTH):
        pairs: list[tuple[Node, Loc]] = []
        if isinstance(node, SequenceNode):
            pairs = [(item, (*loc, i)) for i, item in enumerate(node.value)]
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                name = key.value if isinstance(key, ScalarNode) else "?"
                pairs += [(key, loc), (value, (*loc, name))]
        node, loc = next(pair for pair in pairs if depths[id(pair[0])] == depths[id(node)] - 1)
    at = node.start_mark
    reason = f"nested more than {MAX_DEPTH} lists or mappings deep; a config needs far fewer"
    path = format_path(loc[:4]) + "..."  # the line and column say where: no long path
    return Problem(at.line + 1, at.column + 1, path, reason)


@dataclass(order=True)
class Problem:
    line: int
    column: int
    path: str = field(compare=False)
    reason: str = field(compare=False)
    cause: BaseException | None = field(default=None, compare=False)

    def error(self, source: str, more: Sequence[ConfigError] = ()) -> ConfigError:
        return ConfigError(f"{source}:{self.line}:{self.column}", self.path, self.reason, more)


def locate(
    root: Node | None,
    loc: Loc,
    reason: str,
    cause: BaseException | None = None,
    *,
    missing: bool = False,
) -> Problem:
    """Follow ``loc`` down the node tree to the deepest key or item that exists.

    Parts of a pydantic ``loc`` that match nothing in the file (union members,
    validator names) are left out of the path; a missing field is kept as the last part.
    """
    node, line, column = root, 0, 0
    if root is not None:
        line, column = root.start_mark.line + 1, root.start_mark.column + 1
    parts: list[str | int] = []
    for i, part in enumerate(loc):
        found: Node | None = None
        at: Node | None = None
        if isinstance(node, MappingNode):
            # after construction merged keys come first, so the last match wins
            for key, value in reversed(node.value):
                if isinstance(key, ScalarNode) and key.value == part:
                    found, at = value, key
                    break
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            found = at = node.value[part]
        if found is None or at is None:
            if missing and i == len(loc) - 1:
                parts.append(part)
            continue
        parts.append(part)
        node = found
        line, column = at.start_mark.line + 1, at.start_mark.column + 1
    return Problem(line, column, format_path(parts), reason, cause)


def format_path(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out
