"""A session file saved again as UTF-16 (Windows Notepad's "Unicode", PowerShell 5's
``>``) is refused as damaged, saying so, and left as it is.

Before: its header was read (``json.loads`` takes UTF-16 bytes), and every event line,
holding NUL bytes, was taken for a page a power cut lost: the session loaded with no
events, and the next save cut the file down to its header, the conversation gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_persistence import JsonlBackend, SessionCorruptError, SessionInfo
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_session_file_saved_as_utf16_is_refused_and_kept(tmp_path: Path, encoding: str) -> None:
    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    log.turn("hello")
    backend.append(SessionInfo("s", 1.0), log.events, durable=True)
    backend.close()
    path = tmp_path / "s.jsonl"
    saved = path.read_bytes().decode().encode(encoding)
    path.write_bytes(saved)
    backend = JsonlBackend(tmp_path)
    try:
        said = (
            f"{path}:1: the header line is not UTF-8 text (it holds NUL bytes: was the "
            "file saved as UTF-16?); dsh reads and writes session files in UTF-8"
        )
        with pytest.raises(SessionCorruptError) as caught:
            backend.load("s")
        assert str(caught.value) == said
        with pytest.raises(SessionCorruptError):
            backend.append(SessionInfo("s", 1.0), log.events, durable=True)
        [header] = backend.headers()
        assert said in header.error
    finally:
        backend.close()
    assert path.read_bytes() == saved
