"""The load rules, shared by every backend.

A stored log is a sequence of records, each the JSON text of one event. Reading it:

1. the longest prefix of records that are events whose ``seq`` equals their index is
   kept (a torn last line never gets this far: the backend drops it);
2. a crash of an append-only writer loses only the end of the log (a torn last line,
   a page of NUL bytes the disk never got, a transaction that did not land), and
   leaves no whole record that is not the next event. So a bad record is damage, not
   a cut-off write, reported with where it is and what is wrong, never repaired; the
   one exception is a bad record of a file holding NUL bytes with no ``turn/end``
   after it (a page lost to a power cut: see ``_lost_page``);
3. the rest after such a lost page is the unfinished tail of a write that a crash cut
   short, and is ignored;
4. a turn left open is closed with synthetic events (``close_turn``: the core's, which
   it also applies to a log a backend returns with its last turn open);
5. the result must pass the core's ``check_invariants`` (``check_repaired``): a log
   that does not (a result whose type was changed, a turn/end naming another turn)
   was damaged in a way that kept its JSON valid, and is corruption too.

Records are read as lossless JSON, as the core writes them (``_lossless.loads``): ``NaN``,
``Infinity`` and a number too large for a float (``1e400``), which ``json.loads`` would
read as floats no event can hold, make a record bad like any text that is not JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from dsh.errors import exception_words
from dsh.invariants import NOT_STARTED, OUTCOME_UNKNOWN, check_invariants, close_turn
from dsh.session import SessionEvent
from dsh_persistence._errors import SessionCorruptError
from dsh_persistence._lossless import NotLossless, loads
from dsh_persistence._row_values import stored

__all__ = [
    "NOT_STARTED",
    "OUTCOME_UNKNOWN",
    "check_repaired",
    "close_turn",
    "missing",
    "read_log",
    "whole_event",
]

Record = bytes | str
#: Records parsed with one ``json.loads`` (faster than one call each) up to this many
#: bytes: a long log is never copied whole into one text; a longer record is parsed alone.
_BATCH = 1 << 20
#: Names the place of record ``index`` in messages ("/x/s.jsonl:12").
Where = Callable[[int], str]


def read_log(
    records: Iterable[Record],
    where: Where,
    *,
    lost_pages: bool = True,
    kind: type[str] | type[bytes] | None = None,
) -> tuple[list[SessionEvent], int]:
    """The events of the longest well-numbered prefix, and how many records follow it.

    ``records`` are whole records (a JSONL backend leaves out a torn last line, which
    has no line end), in a list or read one at a time (an iterator: no more of it is
    held than a batch of ``_BATCH`` bytes, or one longer record, until a bad record).
    Raises ``SessionCorruptError`` when there is a bad record, unless ``lost_pages``
    (the store can lose a page to a power cut: a file) and it holds NUL bytes with no
    ``turn/end`` after it: what a crash leaves. A database stores whole rows or none, so
    any bad row of it is damage. ``kind``: the type each record must be (a database's
    text: SQLite may hold a blob in a row), if any.
    """
    events: list[SessionEvent] = []
    batch: list[Record] = []
    size = 0
    rest = iter(records)
    for record in rest:
        length = len(record) if type(record) is str or type(record) is bytes else 0
        if batch and size + length > _BATCH:  # a longer record is parsed alone
            bad = _take(batch, kind, events)
            if bad is not None:
                after = [*batch[bad[0] :], record, *rest]
                _refuse_damage(after, len(events), bad[1], where, lost_pages)
                return events, len(after)
            batch, size = [], 0
        batch.append(record)
        size += length
    bad = _take(batch, kind, events)
    if bad is not None:
        after = batch[bad[0] :]
        _refuse_damage(after, len(events), bad[1], where, lost_pages)
        return events, len(after)
    return events, 0


def _take(
    batch: list[Record], kind: type[str] | type[bytes] | None, events: list[SessionEvent]
) -> tuple[int, str] | None:
    """Append the events of ``batch`` (the records after ``events``) to ``events``, up
    to a bad record: then (its place in the batch, why it is bad)."""
    first = len(events)
    fast = _read_fast(batch, kind, first)
    if fast is not None:
        events += fast
        return None
    for place, text in enumerate(batch):
        index = first + place
        event = _event(text, index) if kind is None or type(text) is kind else _stored_as(text)
        if isinstance(event, str):
            return place, event
        events.append(event)
    return None


def _read_fast(
    records: list[Record], kind: type[str] | type[bytes] | None, first: int
) -> list[SessionEvent] | None:
    """One ``json.loads`` over all records (the events seq ``first`` on); None when any
    record needs a closer look (joining them checks that each is of the first one's
    type, so only that is). One record is parsed as it is, not copied into a join."""
    if not records:
        return []
    if kind is not None and type(records[0]) is not kind:
        return None
    try:
        if len(records) == 1:
            raws = [loads(records[0])]
        elif isinstance(records[0], bytes):
            raws = loads(b"[" + b",".join(records) + b"]")  # type: ignore[arg-type]
        else:
            raws = loads("[" + ",".join(records) + "]")  # type: ignore[arg-type]
    except (ValueError, RecursionError, TypeError):  # nested too deep; not all text
        return None
    if type(raws) is not list or len(raws) != len(records):  # a record held two values
        return None
    events: list[SessionEvent] = []
    append = events.append
    for index, raw in enumerate(raws, first):
        if type(raw) is not dict:
            return None
        seq, event_type = raw.get("seq"), raw.get("type")
        time, data = raw.get("time"), raw.get("data")
        if (
            seq != index
            or type(seq) is not int
            or type(event_type) is not str
            or type(data) is not dict
            or type(time) not in (float, int)
        ):
            return None
        append(SessionEvent(event_type, index, time, data))  # type: ignore[arg-type]
    return events


def _event(text: Record, index: int) -> SessionEvent | str:
    """The event of one record, or why it is not the event with seq ``index``."""
    event = _parsed(text)
    if isinstance(event, str):
        return event
    seq = event.seq
    if type(seq) is int and seq > index:
        return _missing(index, seq)
    if type(seq) is not int or seq != index:
        return f"seq {seq!r} where seq {index} was expected"
    return event


def whole_event(text: Record, seq: int) -> SessionEvent | None:
    """The event ``seq`` if ``text`` is it, whole (a line that lost only its line end:
    a proper prefix of an event's JSON is never whole JSON), else None."""
    event = _event(text, seq)
    return event if isinstance(event, SessionEvent) else None


def _intact(text: Record) -> SessionEvent | None:
    """The event a record holds whole, whatever its (int) seq, or None."""
    event = _parsed(text)
    return event if isinstance(event, SessionEvent) and type(event.seq) is int else None


def _parsed(text: Record) -> SessionEvent | str:
    """The event of a record with ``type``, ``time`` and ``data`` (its ``seq`` as
    found, not checked), or why it is none."""
    if type(text) is not str and type(text) is not bytes:
        return _stored_as(text)
    try:
        raw: Any = loads(text)
    except NotLossless as exc:
        return str(exc)
    except (ValueError, RecursionError) as exc:
        if not text.strip():  # an editor's blank line inside a log (one at the end is not)
            return "a blank line, not an event"
        return f"not a JSON event ({exception_words(exc)})"
    if type(raw) is not dict:
        return f"not an event object (a JSON {type(raw).__name__})"
    seq, kind, time, data = raw.get("seq"), raw.get("type"), raw.get("time"), raw.get("data")
    if type(kind) is not str or type(data) is not dict or type(time) not in (float, int):
        return "not an event (needs type, seq, time and data)"
    return SessionEvent(kind, seq, time, data)  # type: ignore[arg-type]


def _stored_as(text: object) -> str:
    """Why a record of another type than the store's text is no event."""
    return f"stored as {stored(text)} where its JSON text was expected"


def _missing(index: int, seq: int) -> str:
    """What is missing before the intact event ``seq`` found at ``index``."""
    return f"{missing(index, seq)} (the record here is the intact event seq {seq})"


def missing(first: int, end: int) -> str:
    """Says that the events from seq ``first`` up to (not with) ``end`` are missing."""
    lost = f"event seq {first} is" if end == first + 1 else f"events seq {first}-{end - 1} are"
    return f"{lost} missing"


def _refuse_damage(
    records: Sequence[Record], bad: int, reason: str, where: Where, lost_pages: bool
) -> None:
    """Raise ``SessionCorruptError`` unless ``records``, the records from the bad one
    (index ``bad``) on, can be what a crash left of the end of the log: a page lost to a
    power cut (``lost_pages``)."""
    for offset in range(len(records) - 1, -1, -1):
        if _is_turn_end(records[offset]):
            raise SessionCorruptError(
                f"{where(bad)}: {reason}; a finished turn follows at {where(bad + offset)}, "
                "so this is a hole in the log, not a cut-off write. The session is corrupt "
                "and was left as it is."
            )
    if lost_pages and _lost_page(records[0]):
        return
    found = _intact(records[0])
    if found is not None and found.seq > bad:
        raise SessionCorruptError(
            f"{where(bad)}: {reason}, so this is a hole in the log, not a cut-off write (a "
            "crash loses only the end of the log). The session is corrupt and was left "
            "as it is."
        )
    for offset in range(1, len(records)):
        event = _intact(records[offset])
        if event is not None:
            raise SessionCorruptError(
                f"{where(bad)}: {reason}; the intact event seq {event.seq} follows at "
                f"{where(bad + offset)}, so this is damage in the log, not a cut-off write "
                "(an append never writes after a torn line). The session is corrupt and "
                "was left as it is."
            )
    why = (
        "no crash leaves a whole line that is not the next event (a torn append has no "
        "line end, a page lost to a power cut reads as NUL bytes)"
        if lost_pages
        else "no crash leaves a bad row (a transaction stores whole rows or none)"
    )
    raise SessionCorruptError(
        f"{where(bad)}: {reason}; {why}: this is damage in the log, not a cut-off write. "
        "The session is corrupt and was left as it is."
    )


def _lost_page(text: Record) -> bool:
    """Whether a bad record holds NUL bytes: part of a page the disk never got. dsh
    never writes after a torn line, but what it wrote without an fsync (an open turn's
    checkpoints) may reach the disk out of order: after a power cut a file system can
    keep a later page and the file's size but not an earlier page, which reads as zeros.
    The intact records after it are then an unfinished tail, not proof of damage."""
    if isinstance(text, bytes):
        return b"\x00" in text
    return "\x00" in text


def _is_turn_end(text: Record) -> bool:
    """Whether a record is a ``turn/end``: proof that its turn finished, lossless or not
    (a damaged one holding ``NaN`` still says that the records before it are no cut-off
    write)."""
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError, TypeError):  # TypeError: neither str nor bytes
        return False
    return isinstance(raw, dict) and raw.get("type") == "turn/end"


def check_repaired(events: list[SessionEvent], closers: list[SessionEvent], where: Where) -> None:
    """Raise ``SessionCorruptError`` unless the kept ``events`` with the ``closers`` that
    close their open turn pass ``check_invariants``: naming the first event that breaks
    one (its place by ``where``) and the invariant. O(n) for a sound log; a broken one
    is located by bisecting prefixes (O(n log n), only then)."""
    problems = check_invariants(events + closers)
    if not problems:
        return
    log = events + closers
    low, high = 1, len(log)  # the shortest prefix with a problem is log[:high]
    while low < high:
        middle = (low + high) // 2
        if check_invariants(log[:middle], complete=False):
            high = middle
        else:
            low = middle + 1
    first = check_invariants(log[:high], complete=False) or problems
    index = high - 1
    if index < len(events):
        place = where(index)
    else:
        place = f"{where(len(events) - 1)} (the end of the log, where its open turn is closed)"
    raise SessionCorruptError(
        f"{place}: {first[0]}: the log breaks the session invariants, so it was damaged or "
        "edited (a crash leaves none broken). The session is corrupt and was left as it is."
    )
