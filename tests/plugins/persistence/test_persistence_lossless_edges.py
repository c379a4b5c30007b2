"""Lossless JSON (no ``NaN``, ``Infinity`` or ``1e400``) at the edges of the records.

A record holding one of them is damage (``_records``). Two places it reached wrongly:

- a damaged ``turn/end`` holding ``NaN`` after a page of NUL bytes was no longer taken
  for proof of a finished turn, so the NUL page read as a page lost to a power cut and
  the session loaded cut short with no error (before the lossless rule it was a hole);
- the JSONL header and a database's ``meta`` column were read with plain ``json.loads``:
  ``NaN`` and ``1e400`` loaded as floats no meta can hold (dsh never writes them).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from dsh.session import SessionEvent
from dsh_persistence import SessionCorruptError, SessionInfo, SqliteBackend
from dsh_persistence._header import parse_header
from dsh_persistence._records import read_log
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

NOT_LOSSLESS = ["NaN", "-Infinity", "1e400"]


def where(index: int) -> str:
    return f"s.jsonl:{index + 1}"


@pytest.mark.parametrize("value", NOT_LOSSLESS)
def test_a_damaged_turn_end_after_a_nul_page_still_makes_it_a_hole(value: str) -> None:
    start = SessionEvent("session/start", 0, 1.0, {}).to_json().encode()
    turn = SessionEvent("turn/start", 1, 1.0, {"turn": 1}).to_json().encode()
    end = b'{"type":"turn/end","seq":3,"time":1.0,"data":{"turn":1,"x":' + value.encode()
    records = [start, turn, b"\0" * 20, end + b"}}"]
    with pytest.raises(
        SessionCorruptError,
        match=r"^s\.jsonl:3: not a JSON event .*"
        r"a finished turn follows at s\.jsonl:4, so this is a hole",
    ):
        read_log(records, where)


@pytest.mark.parametrize("value", NOT_LOSSLESS)
@pytest.mark.parametrize("field", ["meta", "created"])
def test_a_header_holding_a_number_json_cannot_hold_is_damage(
    tmp_path: Path, value: str, field: str
) -> None:
    path = tmp_path / "s.jsonl"
    data = '{"x":' + value + "}" if field == "meta" else value
    line = f'{{"format":"dsh-session","version":1,"id":"s","{field}":{data}}}'.encode()
    with pytest.raises(SessionCorruptError, match=rf"^{path}:1: the header line is damaged: "):
        parse_header(line, path)


@pytest.mark.parametrize("value", NOT_LOSSLESS)
def test_a_sqlite_meta_holding_a_number_json_cannot_hold_is_damage(
    tmp_path: Path, value: str
) -> None:
    path = tmp_path / "sessions.db"
    backend = SqliteBackend(path)
    try:
        log = LogBuilder()
        log.turn("one")
        backend.prepare()
        backend.append(SessionInfo("s", 1.0, meta={"a": 1}), log.events, durable=True)
        with closing(sqlite3.connect(path)) as db, db:
            db.execute("UPDATE sessions SET meta=? WHERE id='s'", (f'{{"a": {value}}}',))
        with pytest.raises(SessionCorruptError) as caught:
            backend.load("s")
    finally:
        backend.close()
    assert str(caught.value).startswith(f"{path}: session 's': its stored meta is damaged: ")
    assert "is not lossless JSON" in str(caught.value)
