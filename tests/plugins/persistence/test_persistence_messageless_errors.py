"""A failure with no message is worded by its type alone (``dsh.errors.exception_words``):
``(MemoryError)``, not ``(MemoryError: )``, wherever the store quotes a cause: an event
that cannot be written as JSON, a record that is no JSON event, a file ``list`` cannot
read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dsh_persistence._jsonl as jsonl
import dsh_persistence._records as records
from dsh_persistence import JsonlBackend, SessionCorruptError
from dsh_persistence._errors import UnencodableEventError

pytestmark = pytest.mark.plugins("persistence")

HEADER = {"format": "dsh-session", "version": 1, "id": "s", "created": 1.7e9, "cwd": "/w"}
START = '{"type":"turn/start","seq":0,"time":1700000001.0,"data":{"turn":1}}'
END = '{"type":"turn/end","seq":2,"time":1700000002.0,"data":{"turn":1}}'


def write(directory: Path, lines_in: list[str]) -> None:
    header = {**HEADER, "title": "s", "parent": None, "seed_length": None, "meta": {}}
    lines = [json.dumps(header), *lines_in]
    (directory / "s.jsonl").write_text("\n".join(lines) + "\n")


def test_an_unencodable_event_s_messageless_cause_is_its_type() -> None:
    said = str(UnencodableEventError("s", 3, "note/bad", ValueError()))
    assert "cannot be written as JSON (ValueError);" in said


def test_a_record_whose_reading_fails_without_a_message_is_named_by_its_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, [START, "{not json", END])
    real = records.loads

    def loads(text: str | bytes) -> object:
        if b"not json" in (text if isinstance(text, bytes) else text.encode()):
            raise ValueError
        return real(text)

    monkeypatch.setattr(records, "loads", loads)
    with pytest.raises(SessionCorruptError) as caught:
        JsonlBackend(tmp_path).load("s")
    assert "s.jsonl:3: not a JSON event (ValueError)" in str(caught.value)


def test_a_file_list_cannot_read_for_a_messageless_reason_says_its_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, [START])

    def summary(path: str) -> object:
        raise MemoryError

    monkeypatch.setattr(jsonl, "summary", summary)
    [header] = JsonlBackend(tmp_path).headers()
    assert header.error == f"{tmp_path / 's.jsonl'}: cannot read it (MemoryError)"
