"""From a tool call to its subjects.

A call becomes one subject per path argument value and the parts of each command
argument (see ``_commands``); a tool that declares neither path nor command arguments,
and a tool the registry does not know, is one ``tool`` subject. The arguments are read
by the core executor's own reader (``dsh.tools.read_arguments``: JSON, then the tool's
pydantic model, defaults filled in), so the values checked are the values the tool
receives; escaped UTF-8 bytes in them (``caf\\udcc3\\udca9``, ``surrogateescape``) are
read as the characters they spell, the file the system opens (``café``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from dsh.tools import ArgumentsError, read_arguments
from dsh_permissions._commands import command_subjects
from dsh_permissions._links import one_check
from dsh_permissions._paths import utf8_decoded
from dsh_permissions._relinked import one_line
from dsh_permissions._splits import one_split
from dsh_permissions._subjects import Subject, ToolFacts, path_subject

if TYPE_CHECKING:
    from dsh import ToolCall
    from dsh.tools import Tool

__all__ = ["InvalidArguments", "subjects_of"]

#: The subject of a call that names nothing to check: the tool itself (immutable).
_THE_TOOL: Final = Subject("tool", "")
# tuples: ``A | B`` is built on every isinstance call
_TEXT: Final = (str, os.PathLike)
_LISTS: Final = (list, tuple, set, frozenset)


class InvalidArguments(ValueError):
    """The call's arguments cannot be read; the tool would refuse them too."""


def subjects_of(
    facts: ToolFacts,
    tool: Tool | None,
    call: ToolCall,
    root: str,
    links: bool = False,
    reads: bool | None = None,
) -> list[Subject]:
    """The subjects of ``call``. Raises InvalidArguments when they cannot be read.
    ``links``: look for symlinks below directories (see ``path_subject``); ``reads``:
    find the files commands read (see ``command_subjects``)."""
    if tool is None or not (facts.path_args or facts.command_args):
        return [_THE_TOOL]
    values = _arguments(tool, call)
    subjects: list[Subject] = []
    with one_check():  # the symlink walks of this call share one time budget
        for name in facts.path_args:
            subjects.extend(
                path_subject(value, root, links) for value in _texts(name, values.get(name))
            )
        # one split budget for the whole call (``_splits``): its lines together are
        # bounded, not each; a line given again is checked once (its subjects the same)
        lines = (v for name in facts.command_args for v in _texts(name, values.get(name)))
        with one_split():
            for value in dict.fromkeys(lines):
                with one_line():  # a link one of its commands makes counts for the rest
                    subjects.extend(command_subjects(value, root, reads=reads))
    # Declared arguments left empty: the call is still checked, as the tool itself.
    return subjects or [_THE_TOOL]


def _arguments(tool: Tool, call: ToolCall) -> dict[str, Any]:
    try:
        model = read_arguments(tool, call)
    except ArgumentsError as exc:
        if exc.kind == "json":
            raise InvalidArguments(f"the arguments are not valid JSON ({exc.detail})") from None
        if exc.kind == "object":
            raise InvalidArguments("the arguments must be a JSON object") from None
        raise InvalidArguments(f"the arguments do not fit the tool: {exc.detail}") from None
    return {name: getattr(model, name) for name in type(model).model_fields}


def _texts(name: str, value: object) -> Iterable[str]:
    """The text values of an argument: a str, a path (``Path``), or a list of them."""
    if value is None:
        return ()
    if isinstance(value, _TEXT):
        return (_text(name, value),)
    if isinstance(value, _LISTS):
        return tuple(_text(name, v) for v in value)
    raise InvalidArguments(f"argument {name!r} should hold text, not {type(value).__name__}")


def _text(name: str, value: object) -> str:
    """A text value as the system takes it: escaped UTF-8 bytes decoded (``_paths``)."""
    if isinstance(value, str):
        return utf8_decoded(value)
    if isinstance(value, os.PathLike):
        text = os.fspath(value)
        if isinstance(text, str):
            return utf8_decoded(text)
    raise InvalidArguments(f"argument {name!r} should hold text, not {type(value).__name__}")
