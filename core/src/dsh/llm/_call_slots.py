"""The tool calls of an OpenAI-compatible stream: which wire pieces make one call.

A call's pieces share its ``index``, and its first piece carries its ``id`` and name;
servers bend that in several ways (kept apart here, each with the rule that reads it):

- one index reused for every call: a new id with a name at a known index starts a new
  call;
- ids that change on every piece, or an id sent after the name: a new id without a name
  continues the call, which keeps the first id it had; but if a name without an id
  comes next, that id was a new call's, sent before its name;
- a new id *and* the name again on every piece (vLLM's first gpt-oss streaming, PR
  vllm-project/vllm#23522): a new id with the call's own name continues the call while
  its arguments so far are an unfinished JSON text (a call reusing the index starts
  after the last one's arguments are whole, or starts with another name).
"""

from __future__ import annotations

import re
from json import dumps
from typing import Any, Final, final

from dsh.llm.base import ToolCallDelta

__all__ = ["CallSlots"]

_STRUCTURE: Final = re.compile(r'[{}\[\]"\\]')


@final
class CallSlots:
    """Turns each wire tool-call piece into a ``ToolCallDelta`` with dsh's call index
    (in order of first appearance). True once a call has begun."""

    __slots__ = ("_arguments", "_held", "_ids", "_names", "_scans", "_slots")

    def __init__(self) -> None:
        self._slots: dict[int, int] = {}  # wire index -> our index
        self._ids: dict[int, str] = {}  # our index -> the call's id ("" until one comes)
        self._names: dict[int, str | None] = {}
        self._held: dict[int, str] = {}  # wire index -> a new id that came without a name
        self._arguments: dict[int, list[str]] = {}  # our index -> its argument pieces
        self._scans: dict[int, _JsonEnd] = {}  # calls whose arguments are being followed

    def __bool__(self) -> bool:
        return bool(self._slots)

    def delta(self, call: dict[str, Any], position: int) -> ToolCallDelta:
        """The chunk for one wire piece; ``position``: its place in the delta's list
        (the index of a server that sends none)."""
        wire = call.get("index")
        if wire is None:
            wire = position
        call_id = call.get("id") or None
        function = call.get("function") or {}
        name = function.get("name") or None
        arguments = function.get("arguments") or ""
        if not isinstance(arguments, str):  # a few servers send the object itself
            arguments = dumps(arguments)
        ids = self._ids
        index = self._slots.get(wire)
        if name is not None and call_id is None:
            call_id = self._held.pop(wire, None)
        if index is None or (
            call_id is not None
            and name is not None
            and ids[index] != call_id
            and not self._continues(index, name)
        ):
            index = len(ids)
            self._slots[wire] = index
            ids[index] = call_id or ""
            self._names[index] = name
            self._arguments[index] = [arguments]
            return ToolCallDelta(index, id=call_id, name=name, arguments=arguments)
        if call_id is not None and ids[index] != call_id:
            if ids[index]:  # the call keeps its first id
                if name is None:
                    self._held[wire] = call_id
                call_id = None
            else:
                ids[index] = call_id
        if name is not None:
            self._names[index] = name
        self._arguments[index].append(arguments)
        scan = self._scans.get(index)
        if scan is not None:
            scan.feed(arguments)
        return ToolCallDelta(index, id=call_id, name=name, arguments=arguments)

    def _continues(self, index: int, name: str) -> bool:
        """A new id with the call's own name continues it while its arguments are an
        unfinished JSON text (none yet counts as unfinished)."""
        if self._names[index] != name:
            return False
        scan = self._scans.get(index)
        if scan is None:  # followed from now on, only for such a server's calls
            scan = self._scans[index] = _JsonEnd()
            for piece in self._arguments[index]:
                scan.feed(piece)
        return not scan.ended


@final
class _JsonEnd:
    """Whether a JSON text fed in pieces has ended: its nesting depth, inside a string
    or not, and a backslash at the end of the last piece (it escapes the next one's
    first character)."""

    __slots__ = ("depth", "escaped", "in_string", "started")

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False
        self.started = False

    @property
    def ended(self) -> bool:
        return self.started and self.depth == 0 and not self.in_string

    def feed(self, text: str) -> None:
        if not self.started:
            if not text.strip():
                return
            self.started = True
        skip = 0 if self.escaped else -1
        depth, in_string = self.depth, self.in_string
        for match in _STRUCTURE.finditer(text):
            at = match.start()
            if at == skip:
                continue
            char = match.group()
            if in_string:
                if char == "\\":
                    skip = at + 1
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char in "{[":
                depth += 1
            elif char in "}]":
                depth -= 1
        self.escaped = skip == len(text)
        self.depth, self.in_string = depth, in_string
