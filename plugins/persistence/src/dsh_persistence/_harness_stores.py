"""Which store each harness's sessions use: the one its ``persistence:`` section chose
(``harness_started``), opened once per location and shared by the harnesses that chose
it; for sessions of no harness, the one ``configure`` chose last. Imported when dsh
loads its plugins, so it imports neither pydantic nor a backend until they are needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dsh import get_logger

if TYPE_CHECKING:
    from dsh.harness import Harness
    from dsh.session import Session
    from dsh_persistence._backend import SessionBackend
    from dsh_persistence._settings import PersistenceSettings

__all__ = ["HarnessStores", "open_backend"]

log = get_logger("dsh.persistence")


def open_backend(settings: PersistenceSettings) -> SessionBackend:
    """The backend that ``settings`` select (nothing is touched on disk yet)."""
    fsync = settings.fsync != "never"
    if settings.backend == "sqlite":
        from dsh_persistence._sqlite import SqliteBackend

        path, source = settings.database_path(), settings.database_source()
        return SqliteBackend(path, fsync=fsync, source=source)
    if settings.backend == "postgresql":
        from dsh_persistence._postgres import PostgresBackend  # psycopg: only now

        url, source = settings.postgres_url()
        return PostgresBackend(url, fsync=fsync, source=source)
    from dsh_persistence._jsonl import JsonlBackend

    directory, source = settings.session_directory(), settings.directory_source()
    return JsonlBackend(directory, fsync=fsync, source=source)


class HarnessStores:
    """The settings and store of each running harness's sessions, and of sessions of no
    harness. ``pinned`` settings (or ``own_backend``) win over every config."""

    def __init__(
        self, pinned: PersistenceSettings | None, own_backend: SessionBackend | None
    ) -> None:
        self.pinned = pinned
        self.own_backend = own_backend
        self._configured: PersistenceSettings | None = None
        #: the settings and store of sessions of no harness, once asked for
        self.current: tuple[PersistenceSettings, SessionBackend] | None = None
        #: the backends opened, by location
        self.backends: dict[Any, SessionBackend] = {}
        #: id() of each harness started and not stopped -> it, and the settings its
        #: config chose (None: the defaults), in the order they started
        self._harnesses: dict[int, tuple[Harness, PersistenceSettings | None]] = {}
        #: id() of each of those harnesses -> its settings and store, once asked for
        self._chosen: dict[int, tuple[PersistenceSettings, SessionBackend]] = {}

    def configure(self, settings: PersistenceSettings | None) -> None:
        """Use ``settings`` (None: the defaults) for sessions of no harness from now on."""
        self._configured = settings
        self.current = None

    def started(self, harness: Harness) -> None:
        """``harness`` started: its sessions use the store its config chose (which is
        also, until another starts, the store of sessions of no harness)."""
        self._harnesses[id(harness)] = (harness, None)
        if self.pinned is None:
            from dsh_persistence._settings import filed_section

            section = filed_section(harness.config.sections)
            chosen = None if section is None else section.anchored(harness.workspace)
            self._harnesses[id(harness)] = (harness, chosen)
            self.configure(chosen)  # for sessions of no harness: the last one started's
            for warning in [] if section is None else section.unused():
                log.warning("%s", warning)

    def knows(self, harness: Harness) -> bool:
        """Whether ``harness`` started (``started``) and has not stopped."""
        return id(harness) in self._harnesses

    def stopped(self, harness: Harness) -> bool:
        """Forget ``harness``; whether another is still running. The store of sessions of
        no harness is again the one the last started of those still running chose."""
        last = next(reversed(self._harnesses)) == id(harness)
        del self._harnesses[id(harness)]
        self._chosen.pop(id(harness), None)
        if not self._harnesses:
            return False
        if last and self.pinned is None:
            self.configure(self._harnesses[next(reversed(self._harnesses))][1])
        return True

    def resolve(self, harness: Harness | None = None) -> tuple[PersistenceSettings, SessionBackend]:
        """The settings and store of ``harness``'s sessions: those its config chose. For
        no harness, or one this plugin was not started in: those ``configure`` chose
        last (the last harness started, of those still running)."""
        started = None if harness is None else self._harnesses.get(id(harness))
        if started is not None and started[0] is harness:
            chosen = self._chosen.get(id(harness))
            if chosen is None:
                chosen = self._chosen[id(harness)] = self._open(started[1])
            return chosen
        if self.current is None:
            self.current = self._open(self._configured)
        return self.current

    def _open(
        self, settings: PersistenceSettings | None
    ) -> tuple[PersistenceSettings, SessionBackend]:
        """``settings`` (None: the defaults; the pinned ones if any) and their store,
        opened unless it is open already."""
        from dsh_persistence._settings import PersistenceSettings

        settings = self.pinned or settings or PersistenceSettings()
        backend = self.own_backend
        if backend is None:
            location = settings.location()
            backend = self.backends.get(location)
            if backend is None:
                backend = self.backends[location] = open_backend(settings)
        return settings, backend

    def harness_of(self, session: Session) -> Harness | None:
        """The running harness ``session`` is live in (None: none this plugin knows)."""
        for harness, _ in self._harnesses.values():
            if harness.sessions.get(session.id) is session:
                return harness
        return None

    def take_unused(self, keep: set[int]) -> list[SessionBackend]:
        """Forget the backends opened that are neither in ``keep`` (id()s) nor the store
        of a running harness or of sessions of no harness: the caller closes them."""
        keep = keep | {id(backend) for _, backend in self._chosen.values()}
        if self.current is not None:
            keep.add(id(self.current[1]))
        unused = []
        for location, backend in list(self.backends.items()):
            if id(backend) not in keep:
                del self.backends[location]
                unused.append(backend)
        return unused

    def clear(self) -> list[SessionBackend]:
        """Forget every store chosen and opened: the caller closes what it returns."""
        opened = list(self.backends.values())
        self.backends.clear()
        self._chosen.clear()
        self.current = None
        return opened
