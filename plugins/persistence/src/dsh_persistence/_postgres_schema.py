"""The tables of the PostgreSQL backend (where the connection's ``search_path`` finds
them, else created in its first schema) and the advisory-lock keys of its claims.

The tables are prefixed ``dsh_`` so that they can share a database (and a schema) with
others. ``dsh_version`` holds the schema version: a newer one is refused. The layout is
the SQLite backend's: ``dsh_sessions`` one row per session (read by ``headers``, never the
events), ``dsh_events`` one row per event (its JSON line), ``dsh_workspaces`` where a
session last ran when that is not where it started.
"""

from __future__ import annotations

__all__ = [
    "ALIVE_KEY",
    "CLAIMS_ALIVE",
    "CLAIM_KEY",
    "SCHEMA",
    "SCHEMA_LOCK",
    "SCHEMA_VERSION",
    "TABLES",
    "WHERE",
]

#: The newest schema this code reads and the one it creates.
SCHEMA_VERSION = 1
#: Held (for its transaction) while the tables are created: two processes that open a
#: new database at once would otherwise both create them, and one would fail.
SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('dsh-persistence schema', 0))"
#: The advisory-lock key of a session's claim (``%s``, ``%s``: the schema that holds
#: the tables, read at connect, and the session id), so that two stores of one
#: database never share a claim, and two workers of one store always do, whatever
#: else their search paths hold. A claim holds it exclusively; a writer without a
#: claim shares it while it writes.
CLAIM_KEY = "hashtextextended(%s || '/claim/' || %s, 0)"
#: The advisory-lock key (``%s``, ``%s``: two int4 keys, so never a ``CLAIM_KEY``, a
#: bigint) that a claims connection holds exclusively while it lives.
ALIVE_KEY = "%s::integer, %s::integer"
#: Whether the claims connection holding ``ALIVE_KEY`` (``%s``, ``%s``) still lives:
#: sharing its key fails while it holds it (and is let go at the transaction's end).
CLAIMS_ALIVE = f"SELECT NOT pg_try_advisory_xact_lock_shared({ALIVE_KEY})"
#: Where each stored session last ran: the workspace its last turn was written from.
WHERE = (
    "COALESCE((SELECT workspace FROM dsh_workspaces w WHERE w.session=s.id AND "
    "w.created=s.created), s.cwd)"
)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS dsh_version (version integer NOT NULL)",
    """
CREATE TABLE IF NOT EXISTS dsh_sessions (
    id text PRIMARY KEY,
    created double precision NOT NULL,
    updated double precision NOT NULL,
    turns integer NOT NULL,
    title text NOT NULL,
    cwd text NOT NULL,
    meta text NOT NULL,
    next_seq bigint NOT NULL
)""",
    """
CREATE TABLE IF NOT EXISTS dsh_events (
    session text NOT NULL,
    seq bigint NOT NULL,
    line text NOT NULL,
    PRIMARY KEY (session, seq)
)""",
    """
CREATE TABLE IF NOT EXISTS dsh_workspaces (
    session text PRIMARY KEY,
    created double precision NOT NULL,
    workspace text NOT NULL
)""",
)
#: Every table ``SCHEMA`` creates: a store without one of them holds no session.
TABLES = ("dsh_version", "dsh_sessions", "dsh_events", "dsh_workspaces")
