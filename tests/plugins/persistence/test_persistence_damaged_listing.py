"""One damaged file in a JSONL store never breaks (or hangs) ``dsh sessions list``.

Before: a record nested deeper than ``json`` reads (``[[[[…``) raised ``RecursionError``
out of ``load`` and of ``headers()``; a header whose ``meta`` was not an object raised
``TypeError`` on load; a last event with an out-of-range ``time`` (``1e400`` reads as
infinity) made the table fail with ``OverflowError``; a FIFO named like a session file
blocked ``list`` (and ``load``) until something wrote to it. Each is now a session
listed as unreadable, with its reason, and loading it raises a ``PersistenceError``.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from persistence_cli_support import run

from dsh_persistence import JsonlBackend, PersistenceError, SessionCorruptError
from dsh_persistence._listing import json_rows, table

pytestmark = pytest.mark.plugins("persistence")

DEEP = "[" * 100_000


def write(directory: Path, name: str, records: list[str], **header: Any) -> None:
    fields = {"format": "dsh-session", "version": 1, "id": name, "created": 1.7e9}
    fields.update(cwd="/w", title=name, parent=None, seed_length=None, meta={})
    directory.mkdir(exist_ok=True)
    lines = [json.dumps({**fields, **header}), *records]
    (directory / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


def event(seq: int, kind: str, data: dict[str, Any], time: str = "1700000001.0") -> str:
    return f'{{"type":"{kind}","seq":{seq},"time":{time},"data":{json.dumps(data)}}}'


GOOD = [event(0, "turn/start", {"turn": 1}), event(1, "user/message", {"content": "hi"})]


def test_a_record_nested_too_deep_is_a_bad_record(tmp_path: Path) -> None:
    write(tmp_path, "hole", [*GOOD, DEEP, event(3, "turn/end", {"turn": 1})])
    write(tmp_path, "tail", [*GOOD, DEEP])
    backend = JsonlBackend(tmp_path)

    with pytest.raises(SessionCorruptError, match=r"hole\.jsonl:4: not a JSON event"):
        backend.load("hole")
    with pytest.raises(SessionCorruptError, match=r"tail\.jsonl:4: not a JSON event"):
        backend.load("tail")  # a whole line: no crash leaves it
    assert {h.id: h.error for h in backend.headers()} == {"hole": "", "tail": ""}


def test_a_turn_boundary_whose_data_is_not_an_object_is_listed(tmp_path: Path) -> None:
    """``headers()`` read the turn of the last boundary with ``data.get``: a list there
    raised ``AttributeError`` out of the whole list."""
    boundary = '{"type":"turn/end","seq":2,"time":1700000002.0,"data":[1]}'
    write(tmp_path, "odd", [*GOOD, boundary])
    write(tmp_path, "good", GOOD)

    found = {h.id: (h.turns, h.error) for h in JsonlBackend(tmp_path).headers()}
    assert found == {"odd": (0, ""), "good": (1, "")}


def test_damage_no_check_foresaw_is_listed_with_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever reading one file raises, the others are listed, and it with its error."""
    import dsh_persistence._jsonl as jsonl

    write(tmp_path, "odd", GOOD)
    write(tmp_path, "good", GOOD)
    real = jsonl.summary

    def summary(path: str) -> Any:
        if path.endswith("odd.jsonl"):
            raise AttributeError("'list' object has no attribute 'get'")
        return real(path)

    monkeypatch.setattr(jsonl, "summary", summary)
    found = {h.id: h.error for h in JsonlBackend(tmp_path).headers()}
    assert found == {
        "good": "",
        "odd": f"{tmp_path / 'odd.jsonl'}: cannot read it "
        "(AttributeError: 'list' object has no attribute 'get')",
    }


def test_a_header_nested_too_deep_or_with_a_meta_not_an_object_is_unreadable(
    tmp_path: Path,
) -> None:
    write(tmp_path, "meta", GOOD, meta=[1, 2])
    write(tmp_path, "good", GOOD)
    (tmp_path / "deep.jsonl").write_text(DEEP + "\n" + "\n".join(GOOD) + "\n")
    backend = JsonlBackend(tmp_path)

    with pytest.raises(SessionCorruptError, match=r"meta\.jsonl:1: the header's meta is not"):
        backend.load("meta")
    with pytest.raises(SessionCorruptError, match=r"deep\.jsonl:1: the header line is not JSON"):
        backend.load("deep")
    errors = {h.id: h.error for h in backend.headers()}
    assert errors["good"] == ""
    assert "the header's meta is not an object (a JSON array)" in errors["meta"]
    assert "the header line is not JSON" in errors["deep"]


@pytest.mark.parametrize("time", ["1e400", "-1e400", "1e300", "NaN"])
def test_an_absurd_last_time_does_not_break_the_list(tmp_path: Path, time: str) -> None:
    write(tmp_path, "good", GOOD)
    write(tmp_path, "odd", [GOOD[0], event(1, "user/message", {}, time=time)])
    headers = JsonlBackend(tmp_path).headers()

    lines = table(headers, terminal=False).splitlines()
    assert any(line.startswith("good ") and "2023-11-14" in line for line in lines)
    assert any(line.startswith("odd ") for line in lines)
    rows = json.loads(json_rows(headers), parse_constant=lambda name: pytest.fail(name))
    assert {row["id"] for row in rows} == {"good", "odd"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_like_a_session_file_is_refused_without_blocking(
    tmp_path: Path,
) -> None:
    write(tmp_path, "good", GOOD)
    os.mkfifo(tmp_path / "pipe.jsonl")
    backend = JsonlBackend(tmp_path)
    found: list[Any] = []

    def read() -> None:
        found.append({h.id: h.error for h in backend.headers()})
        for call in (backend.load, backend.claim, backend.sync, backend.delete):
            try:
                call("pipe")
            except PersistenceError as exc:
                found.append(str(exc))

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # let the blocked open go (Linux: O_RDWR ends either wait)
        os.close(os.open(tmp_path / "pipe.jsonl", os.O_RDWR | os.O_NONBLOCK))
        pytest.fail("reading the store blocked on a FIFO")
    errors, loading, claiming, syncing, deleting = found
    assert errors["good"] == ""
    path = tmp_path / "pipe.jsonl"
    assert errors["pipe"] == f"{path}: cannot read the session file: not a regular file (a FIFO)"
    assert loading == errors["pipe"]
    assert claiming == f"{path}: cannot open the session file to write: not a regular file (a FIFO)"
    assert syncing == f"{path}: cannot open the session file: not a regular file (a FIFO)"
    assert deleting == f"{path}: cannot delete the session file: not a regular file (a FIFO)"
    assert path.exists()


def test_dsh_sessions_list_shows_every_damaged_file_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "sessions"
    write(directory, "good", GOOD)
    write(directory, "meta", GOOD, meta="x")
    write(directory, "deep", [*GOOD, DEEP])
    write(directory, "late", [GOOD[0], event(1, "user/message", {}, time="1e400")])
    (directory / "header.jsonl").write_text(DEEP + "\n")
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence:\n  directory: {directory}\n")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.chdir(tmp_path)

    assert run(config, "list") == 0
    out = capsys.readouterr().out
    for name in ("good", "deep", "late"):
        assert f"\n{name} " in out
    assert "(unreadable: " in out.split("\nmeta ", 1)[1].split("\n", 1)[0]
    assert "(unreadable: " in out.split("\nheader ", 1)[1].split("\n", 1)[0]
