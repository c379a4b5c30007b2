"""How a write of the PostgreSQL backend meets the claims (``_postgres_claims``): a
writer holding the claim checks it before the write and confirms it once the write holds
the session's row; one holding none shares the claim's lock for its transaction, which
keeps a claim out meanwhile. Each refusal says what was left undone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dsh_persistence._errors import SessionInUseError
from dsh_persistence._postgres_schema import CLAIM_KEY, CLAIMS_ALIVE

if TYPE_CHECKING:
    import psycopg

    from dsh_persistence._postgres_claims import AdvisoryClaims

__all__ = ["check_claim", "confirm_claim", "lock_unclaimed", "nothing"]


def nothing(doing: str) -> str:
    """What a refused write (``doing``: ``append to``, ``delete``) left undone."""
    return "nothing was deleted" if doing == "delete" else "nothing was written"


def check_claim(
    claims: AdvisoryClaims,
    db: psycopg.Connection[Any],
    schema: str,
    location: str,
    session_id: str,
    doing: str,
) -> bool:
    """Before a write of ``session_id``: True when this worker holds its claim
    (taken again if its connection ended: ``confirm_claim`` follows once the write
    holds the session's row); ``SessionInUseError`` when the claim was lost to
    another worker; else ``lock_unclaimed``, False."""
    held = claims.check(schema, session_id)
    if held == "unclaimed":
        lock_unclaimed(db, schema, location, session_id, doing)
        return False
    if held == "lost":
        raise SessionInUseError(
            f"{location}: cannot {doing} session {session_id!r}: this worker's "
            "claim of it ended with its connection to the server (a restart, a "
            "failover, or the connection was ended), and another worker holds the "
            f"claim now; {nothing(doing)}"
        )
    return True


def confirm_claim(
    claims: AdvisoryClaims,
    db: psycopg.Connection[Any],
    location: str,
    session_id: str,
    doing: str,
) -> None:
    """In a write's transaction, holding the session's row: the claim checked
    before is still held (its connection may have ended since, and another worker
    claimed the session). A claim taken after this waits for the row (``claim``),
    so the write comes before it. ``SessionInUseError`` when it is not held: the
    transaction is rolled back, and the next write takes the claim again or finds
    it lost."""
    key = claims.alive_key(session_id)
    held = key is not None and db.execute(CLAIMS_ALIVE, key).fetchone() == (True,)
    if not held:
        raise SessionInUseError(
            f"{location}: cannot {doing} session {session_id!r}: this worker's "
            "claim of it ended with its connection to the server while the write was "
            f"under way (another worker may hold the claim now); {nothing(doing)}"
        )


def lock_unclaimed(
    db: psycopg.Connection[Any], schema: str, location: str, session_id: str, doing: str
) -> None:
    """For a write by a writer that holds no claim of ``session_id``: share the
    claim's lock for the transaction (as other such writers may: the session's row
    lock orders them), which keeps a claim out meanwhile; ``SessionInUseError`` when
    another worker holds the claim."""
    row = db.execute(f"SELECT pg_try_advisory_xact_lock_shared({CLAIM_KEY})", (schema, session_id))
    if row.fetchone() != (True,):
        raise SessionInUseError(
            f"{location}: cannot {doing} session {session_id!r}: another worker is "
            f"continuing it (it holds the session's claim); {nothing(doing)}"
        )
