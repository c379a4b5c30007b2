"""The conformance checks of damage a crash cannot leave but that the load rules of
``_contract_load`` would otherwise read as a crash tail or not notice
(docs/persistence.md, "Loading: the repair rules", rules 3 and 5): a whole last record
that is not an event, and a log whose JSON stays valid but which breaks the session
invariants. Both are ``SessionCorruptError`` for ``load``, ``tail`` and the next append,
and the store stays as found."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from dsh_persistence._backend import SessionBackend
from dsh_persistence._errors import PersistenceError, SessionCorruptError
from dsh_persistence.testing._contract_support import Opener, info, two_turns
from dsh_persistence.testing._damage import Damage

__all__ = ["DamageContract"]


def _last(kind: str, events: list[Any]) -> int:
    return max(index for index, event in enumerate(events) if event["type"] == kind)


def _retyped(event: dict[str, Any]) -> dict[str, Any]:
    return {**event, "type": "tool/resulu"}


def _renumbered(event: dict[str, Any]) -> dict[str, Any]:
    return {**event, "data": {**event["data"], "turn": 8}}


class DamageContract:
    """Mixed into ``BackendContract``: its ``backend``, ``open_backend`` and ``damage``
    fixtures."""

    def _refused(self, open_backend: Opener, seq: int, events: list[Any], *expected: str) -> None:
        """Load, tail and an append from the damaged record on all refuse it, twice
        (nothing was rewritten or cut off)."""
        for _ in range(2):
            with pytest.raises(SessionCorruptError) as caught:
                open_backend().load("s1")
            message = str(caught.value)
            for part in ("s1", "corrupt", *expected):
                assert part in message
            writer = open_backend()
            with pytest.raises(SessionCorruptError):
                writer.tail("s1")
            with pytest.raises(PersistenceError):
                writer.append(info(), events[seq:], durable=True)

    @pytest.mark.parametrize(
        ("kind", "change", "expected"),
        [
            ("tool/result", _retyped, "tool calls without a result"),
            ("turn/end", _renumbered, "closes turn 8 but turn 2 is open"),
        ],
        ids=["result-retyped", "turn-end-renumbered"],
    )
    def test_damage_that_keeps_the_json_valid_is_corruption(
        self,
        backend: SessionBackend,
        damage: Damage,
        open_backend: Opener,
        kind: str,
        change: Callable[[dict[str, Any]], dict[str, Any]],
        expected: str,
    ) -> None:
        """A stored log must pass ``check_invariants`` once its open turn is closed: a
        result whose type was changed leaves its call unanswered in every later request
        (a provider refuses them), a turn/end naming another turn breaks the turns."""
        events = two_turns().events
        backend.append(info(), events, durable=True)
        dicts = [event.to_dict() for event in events]
        seq = _last(kind, dicts)
        damage.rewrite("s1", seq, json.dumps(change(dicts[seq]), separators=(",", ":")))

        self._refused(open_backend, seq, events, expected)

    @pytest.mark.parametrize("finished", [True, False], ids=["finished-turn", "open-turn"])
    def test_a_whole_last_record_that_is_no_event_is_corruption(
        self, backend: SessionBackend, damage: Damage, open_backend: Opener, finished: bool
    ) -> None:
        """A crash leaves no whole record that does not parse (a torn append has no line
        end, a lost page reads as NUL bytes, a transaction lands whole): a bad last
        record is damage, said with its place, not a crash tail the next append cuts
        off."""
        events = two_turns().events
        stored = events if finished else events[:-3]
        backend.append(info(), stored, durable=True)
        seq = len(stored) - 1
        damage.rewrite("s1", seq, json.dumps(stored[seq].to_dict())[:-5])

        self._refused(open_backend, seq, events, "not a JSON event")

    @pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
    def test_a_record_holding_nan_or_an_infinity_is_corruption(
        self, backend: SessionBackend, damage: Damage, open_backend: Opener, number: str
    ) -> None:
        """The log is lossless JSON (the core refuses NaN and infinities as events enter
        it): a record holding one (``NaN`` and ``Infinity``, which Python's JSON reader
        accepts, or a number too large for a float) was edited or damaged, said with its
        place, never loaded as a float the log cannot hold."""
        events = two_turns().events
        backend.append(info(), events, durable=True)
        seq = 2
        record = events[seq].to_dict()
        text = json.dumps({**record, "data": {**record["data"], "x": 0.5}})
        damage.rewrite("s1", seq, text.replace("0.5", number))

        self._refused(open_backend, seq, events, "not lossless JSON", number)
