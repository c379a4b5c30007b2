"""Opening a database backend: the error saying why the store cannot be used, and the
set-up of a new connection, which is closed when that set-up fails. Shared by the SQLite
and PostgreSQL backends, so that both say it and clean up alike."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from dsh_persistence._errors import PersistenceError, SessionStoreUnusableError

__all__ = ["set_up", "unusable_error"]


class _Connection(Protocol):
    def close(self) -> None: ...


def unusable_error(
    location: object, source: str, doing: str, reason: object
) -> SessionStoreUnusableError:
    """The store at ``location`` (given by the setting ``source``, if any) cannot be
    used: ``doing`` failed, for ``reason``, whose lines (psycopg adds a hint on a line of
    its own) are joined into one."""
    setting = f" ({source})" if source else ""
    said = " ".join(line.strip() for line in str(reason).splitlines() if line.strip())
    return SessionStoreUnusableError(f"{location}{setting}: cannot {doing}: {said}")


@contextmanager
def set_up(
    db: _Connection,
    errors: type[Exception] | tuple[type[Exception], ...],
    failed: Callable[[str, object], PersistenceError],
    doing: str,
) -> Iterator[None]:
    """Set up the new connection ``db`` in the block. When the block raises, ``db`` is
    closed (never left open for no one to use); a database error (one of ``errors``)
    becomes ``failed(doing, error)``, anything else (a newer schema, an interrupt)
    goes on as it is."""
    try:
        yield
    except errors as exc:
        db.close()
        raise failed(doing, exc) from exc
    except BaseException:
        db.close()
        raise
