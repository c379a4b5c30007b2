"""An empty or blank session id names no session: it began every stored id, so
``dsh sessions show ''`` and ``dsh run --session ''`` said ``'' matches 6 sessions``
(or took the only one). Refused saying so, as ``-m ''`` is."""

from __future__ import annotations

import pytest

from dsh.errors import DshError
from dsh.persistence import SessionHeader, StoredSession, find_session


class Listed:
    """A persistence service that only lists ids (what ``find_session`` reads)."""

    def __init__(self, *ids: str) -> None:
        self.ids = ids

    async def list(self) -> list[SessionHeader]:
        return [SessionHeader(session_id, 0.0, 0.0, 0) for session_id in self.ids]

    async def load(self, session_id: str) -> StoredSession | None:
        return None

    async def delete(self, session_id: str) -> bool:
        return False


@pytest.mark.parametrize("wanted", ["", " ", "\t\n"])
@pytest.mark.parametrize("ids", [("main-session-1", "main-session-2"), ("main-session-1",)])
async def test_an_empty_or_blank_id_is_refused_saying_so(wanted: str, ids: tuple[str]) -> None:
    with pytest.raises(DshError, match=r"^the session id is (empty|blank)[^:]*: give one "):
        await find_session(Listed(*ids), wanted)
