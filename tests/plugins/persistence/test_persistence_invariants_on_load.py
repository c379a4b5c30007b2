"""Damage that keeps the JSON valid (docs/persistence.md, "Loading: the repair rules",
rule 3): a stored log that breaks the session invariants once its open turn is closed
is ``SessionCorruptError`` naming the record (file and line, or database, session and
event) and the invariant. It was loaded, a resume appended after it, and every later
request held a tool call without a result (a provider refuses those)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_persistence_behaviours import harness_on
from test_persistence_m_records import place, raw_text, replace, store

from dsh import DshError
from dsh.session import SessionEvent
from dsh.testing import ScriptedModel, check_invariants
from dsh_persistence import PersistenceSettings
from dsh_persistence._errors import SessionCorruptError
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def three_turns() -> LogBuilder:
    log = LogBuilder()
    for prompt in ("one", "two", "three"):
        log.turn(prompt)
    return log


@pytest.mark.parametrize(
    ("kind", "field", "value", "blamed", "said"),
    [
        ("tool/result", "type", "tool/resulu", "step/end", "tool calls without a result"),
        ("turn/end", "turn", 8, "turn/end", "closes turn 8 but turn 3 is open"),
    ],
    ids=["result-retyped", "turn-end-renumbered"],
)
async def test_a_stored_log_that_breaks_the_invariants_is_refused_where_it_breaks(
    settings: PersistenceSettings, kind: str, field: str, value: object, blamed: str, said: str
) -> None:
    events = three_turns().events
    store(settings, events)
    seq = max(e.seq for e in events if e.type == kind)
    damaged: dict[str, Any] = events[seq].to_dict()
    if field == "type":
        damaged["type"] = value
    else:
        damaged["data"] = {**damaged["data"], field: value}
    replace(settings, seq, json.dumps(damaged, separators=(",", ":")))
    at = next(e.seq for e in events[seq:] if e.type == blamed)
    before = raw_text(settings)

    for _ in range(2):  # a resume refuses it too, and writes nothing
        async with harness_on(settings, ScriptedModel()) as harness:
            with pytest.raises(DshError) as caught:
                await harness.agents.resume("a", "s", options={"model": "scripted"})
        message = str(caught.value)
        assert f"{place(settings, at)}: seq {at} ({blamed}): {said}" in message
        assert "corrupt" in message
    assert raw_text(settings) == before


def test_check_repaired_blames_the_end_when_only_the_closers_break_it() -> None:
    """A closer the repair adds that breaks an invariant is blamed on the end of the log,
    after its last stored event; a sound log with its closers passes."""
    from dsh_persistence import check_repaired, close_turn

    events = three_turns().events
    open_turn = events[: len(events) - 4]
    closers = close_turn(open_turn)
    check_repaired(open_turn, closers, lambda index: f"#{index}")
    assert check_invariants(open_turn + closers) == []

    bad = [SessionEvent("turn/end", len(open_turn), 1.0, {"turn": 9})]
    with pytest.raises(SessionCorruptError) as caught:
        check_repaired(open_turn, bad, lambda index: f"#{index}")
    assert str(caught.value).startswith(f"#{len(open_turn) - 1} (the end of the log")
