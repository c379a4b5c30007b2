"""A session file's header holds the agent's options (a long system prompt among
them), and the writer never checked its size while ``list`` and ``delete`` read at most
1 MiB of it: a session with a header longer than that was listed as "the header line
is incomplete", could not be continued (``--continue`` reads the listing), and was not
deleted ("not a dsh session file"), while ``show`` read it. Reading and writing now
agree on ``HEADER_LIMIT``: the writer refuses a longer header when the session is
created, and a file cut by the limit is said to be so (``delete``: and that it is
removed by hand, where it said only "not deleted")."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh.session import SessionEvent
from dsh_persistence import JsonlBackend, PersistenceError, SessionFormatError, SessionInfo, _header
from dsh_persistence._files import file_name

pytestmark = pytest.mark.plugins("persistence")

EVENT = SessionEvent("note", 0, 2.0, {"by": "test"})


def saved(backend: JsonlBackend, session_id: str, prompt: str) -> None:
    info = SessionInfo(session_id, 1.0, {"system_prompt": prompt})
    backend.append(info, [EVENT], durable=True)


def test_a_header_over_a_mib_is_listed_loaded_and_deleted(tmp_path: Path) -> None:
    backend = JsonlBackend(tmp_path)
    try:
        saved(backend, "s", "You are helpful. " * ((2 << 20) // 17))
        assert (tmp_path / file_name("s")).stat().st_size > 2 << 20
        (header,) = backend.headers()
        assert (header.id, header.error) == ("s", "")
        loaded = backend.load("s")
        assert loaded is not None and len(loaded.stored.events) == 1
        assert backend.delete("s") is True
        assert backend.headers() == []
    finally:
        backend.close()


def test_a_header_longer_than_the_limit_is_refused_when_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_header, "HEADER_LIMIT", 4096)
    backend = JsonlBackend(tmp_path)
    try:
        with pytest.raises(PersistenceError) as caught:
            saved(backend, "s", "x" * 4096)
        saved(backend, "t", "x" * 100)  # a shorter one is written
    finally:
        backend.close()
    said = str(caught.value)
    assert said.startswith("session 's': its header (the agent's options and meta) would be ")
    assert said.endswith("longer than the 4096 a session file's header may be; nothing was written")
    assert sorted(p.name for p in tmp_path.iterdir()) == [file_name("t")]


def test_a_file_cut_by_the_limit_is_said_to_be_longer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One written by hand (or with a larger limit): ``list`` and ``delete`` say why."""
    backend = JsonlBackend(tmp_path)
    try:
        saved(backend, "s", "x" * 8192)
        monkeypatch.setattr(_header, "HEADER_LIMIT", 4096)
        path = tmp_path / file_name("s")
        (header,) = backend.headers()
        assert header.error == (
            f"{path}:1: the header line is longer than 4096 bytes, the most dsh reads"
        )
        with pytest.raises(SessionFormatError) as caught:
            backend.delete("s")
        assert str(caught.value) == (
            f"{path}:1: the header line is longer than 4096 bytes, the most dsh reads; not "
            f"deleted (remove the file by hand: {path})"
        )
        assert path.exists()
    finally:
        backend.close()
