"""The tool calls of an OpenAI-compatible stream: which wire pieces make one call.

A call's pieces share its ``index``, and its first piece carries its ``id`` and name;
servers bend that in several ways (kept apart here, each with the rule that reads it):

- one index reused for every call: a new id with a name at a known index starts a new
  call; so does a name without an id (StepFun, GLM on Mistral: no call has one, and the
  index may be the same or missing) by the rule below: another name, or the same name
  with arguments once the call's are a whole JSON text;
- ids that change on every piece, or an id sent after the name: a new id without a name
  continues the call, which keeps the first id it had; but if a name without an id
  comes next, that id was a new call's, sent before its name (a call that starts there
  with an id of its own drops it);
- a new id *and* the name again on every piece (vLLM's first gpt-oss streaming, PR
  vllm-project/vllm#23522): a new id with the call's own name continues the call while
  its arguments so far are an unfinished JSON text (a call reusing the index starts
  after the last one's arguments are whole, or starts with another name); a call with
  no arguments yet is continued only by a piece that brings some (a new id with the
  name and no arguments again is the next call of a tool without arguments);
- pieces of one call moving to another index with the call's id (vLLM's gpt-oss, PR
  vllm-project/vllm#33520: the index counts the messages completed so far): an
  id of a call of this answer continues that call wherever it comes, unless the piece
  names another tool, or names it again once the call's arguments are a whole JSON text
  (a server that gives several calls one id); a call that had no name yet (its id came
  first) takes the name the piece brings.
"""

from __future__ import annotations

import re
import secrets
import string
from json import dumps
from typing import Any, Final, final

from dsh.llm.base import ToolCallDelta

__all__ = ["CallSlots"]

_ID_CHARACTERS: Final = string.ascii_letters + string.digits
_STRUCTURE: Final = re.compile(r'[{}\[\]"\\]')


@final
class _Call:
    """One call: dsh's index for it, its first id ("" until one comes), its name, and
    its argument pieces until ``CallSlots._continues`` needs to know where they end
    (from then on a ``_JsonEnd`` follows them instead: the text is never joined here)."""

    __slots__ = ("id", "index", "name", "pieces", "scan")

    def __init__(self, index: int, call_id: str | None, name: str | None, arguments: str):
        self.index = index
        self.id = call_id or ""
        self.name = name
        self.pieces: list[str] = [arguments]
        self.scan: _JsonEnd | None = None


@final
class CallSlots:
    """Turns each wire tool-call piece into a ``ToolCallDelta`` with dsh's call index
    (in order of first appearance). True once a call has begun."""

    __slots__ = ("_all", "_by_id", "_held", "_slots")

    def __init__(self) -> None:
        self._slots: dict[int, _Call] = {}  # wire index -> the call its pieces continue
        self._by_id: dict[str, _Call] = {}  # a call's first id -> the call
        self._all: list[_Call] = []  # every call, by dsh's index
        self._held: dict[int, str] = {}  # wire index -> a new id that came without a name

    def __bool__(self) -> bool:
        return bool(self._all)

    def whole(self) -> bool:
        """Whether every call's arguments so far are a whole JSON text, or none at all
        (a tool without arguments): false for a call cut in the middle of them."""
        for call in self._all:
            scan = call.scan
            if scan is None:  # followed only for some servers' calls: read its pieces
                scan = _JsonEnd()
                for piece in call.pieces:
                    scan.feed(piece)
            if scan.started and not scan.ended:
                return False
        return True

    def made_ids(self) -> list[ToolCallDelta]:
        """Once the answer has ended: a piece giving each call with a name and no id an
        id of its own, 9 random letters and digits (the only ids Mistral's API takes
        back), unique in the answer and, at 62**9 draws, in the session (the call's
        result names it)."""
        made: list[ToolCallDelta] = []
        taken = {call.id for call in self._all}
        for call in self._all:
            if not call.id and call.name:
                while call.id in taken:
                    call.id = "".join(secrets.choice(_ID_CHARACTERS) for _ in range(9))
                taken.add(call.id)
                made.append(ToolCallDelta(call.index, id=call.id))
        return made

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
        slot = self._slots.get(wire)
        if name is not None and call_id is None:
            call_id = self._held.pop(wire, None)
        if call_id is not None and (slot is None or slot.id != call_id):
            known = self._by_id.get(call_id)  # a call of this answer, moved here
            if known is not None and (
                name is None or known.name is None or self._continues(known, name)
            ):
                self._slots[wire] = slot = known
        if slot is None or (
            name is not None
            and self._starts(slot, call_id, name, arguments)
            and not self._continues(slot, name, arguments)
        ):
            slot = self._slots[wire] = _Call(len(self._all), call_id, name, arguments)
            self._all.append(slot)
            if call_id is not None:
                self._by_id.setdefault(call_id, slot)
            self._held.pop(wire, None)  # a held id is not this call's
            return ToolCallDelta(slot.index, id=call_id, name=name, arguments=arguments)
        if call_id is not None and slot.id != call_id:
            if slot.id:  # the call keeps its first id
                if name is None:
                    self._held[wire] = call_id
                call_id = None
            else:
                slot.id = call_id
                self._by_id.setdefault(call_id, slot)
        if name is not None:
            slot.name = name
        if slot.scan is None:
            slot.pieces.append(arguments)
        else:
            slot.scan.feed(arguments)
        return ToolCallDelta(slot.index, id=call_id, name=name, arguments=arguments)

    @staticmethod
    def _starts(slot: _Call, call_id: str | None, name: str, arguments: str) -> bool:
        """Whether a named piece may start a new call at its slot (``_continues`` has
        the last word): one with another id, or one without an id at a call that has
        a name, if it names another tool or brings arguments (its name alone again is
        a server repeating it)."""
        if call_id is not None:
            return slot.id != call_id
        return slot.name is not None and (slot.name != name or bool(arguments.strip()))

    @staticmethod
    def _continues(call: _Call, name: str, arguments: str | None = None) -> bool:
        """A piece with the call's own name continues it while its arguments are an
        unfinished JSON text. None yet counts as unfinished, except for a new id's
        piece (``arguments``: its text) that brings none either: that is the next
        call of a tool without arguments."""
        if call.name != name:
            return False
        scan = call.scan
        if scan is None:  # followed from now on, only for such a server's calls
            scan = call.scan = _JsonEnd()
            for piece in call.pieces:
                scan.feed(piece)
            call.pieces = []
        if not scan.started:
            return arguments is None or bool(arguments.strip())
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
