"""``PersistencePlugin``: the hook impls that make sessions durable.

Write path: ``session_event`` only asks for a checkpoint (mid-turn, after the prompt,
steers, tool calls, tool results and step ends, written a little later by a thread);
``session_flush`` writes what is new and returns once it is on disk. Both store
``session.events[written:]`` through a per-session ``SessionWriter``. Read path:
``session_persistence`` returns a ``StoredSessions``.

Settings come from the harness: ``harness_started`` reads the validated ``persistence:``
section, and each harness's sessions (their writers, claims and service) use the store
its section chose (``HarnessStores``). Settings passed to the constructor are pinned and
ignore the config.
This module is imported when dsh loads its plugins, so it imports neither pydantic nor
anyio nor a backend until they are needed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from dsh import hookimpl
from dsh_persistence._claim_notes import ClaimNotes
from dsh_persistence._harness_stores import HarnessStores

if TYPE_CHECKING:
    from dsh.agent import Agent
    from dsh.harness import Harness
    from dsh.session import Session, SessionEvent
    from dsh_persistence._backend import SessionBackend
    from dsh_persistence._checkpoints import Checkpointer
    from dsh_persistence._service import StoredSessions
    from dsh_persistence._settings import PersistenceSettings
    from dsh_persistence._writer import SessionWriter

__all__ = ["CHECKPOINT_AT", "PersistencePlugin"]

#: Event types after which a checkpoint is asked for (when ``checkpoints`` is on): the
#: prompt (and a steer) as soon as the turn takes it, so a crash while the model still
#: streams its first answer keeps it; then each tool call, tool result and step end.
CHECKPOINT_AT = frozenset(
    {"user/message", "steering/message", "tool/call", "tool/result", "step/end"}
)


class PersistencePlugin:
    """Durable sessions. The ``persistence`` entry point registers one instance that
    follows the config; register your own with fixed ``settings``, or with a ``backend``
    of your own (a ``SessionBackend``), under another name."""

    def __init__(
        self,
        settings: PersistenceSettings | None = None,
        *,
        backend: SessionBackend | None = None,
    ) -> None:
        #: the settings and store each harness's sessions use, and the backends opened
        self._stores = HarnessStores(settings, backend)
        #: (id() of a backend, the write settings of the harness asking) -> its service
        self._services: dict[tuple[int, str, bool, float], StoredSessions] = {}
        #: id() of a live session -> its writer (which holds the session, so the id stays
        #: its own): by the session, not its id, as harnesses of this process with stores
        #: of their own may each run a session of one id
        self._writers: dict[int, SessionWriter] = {}
        #: id() of a live session -> the workspace of its agent (its writes record it)
        self._workspaces: dict[int, str] = {}
        self._checkpoints: Checkpointer | None = None
        #: id() of a backend -> how many disposes are releasing a claim on it now
        self._releasing: dict[int, int] = {}
        #: The claims taken whose writer is not made yet: it writes where its claim is.
        self._claims = ClaimNotes()

    # -- configuration -------------------------------------------------------------------

    def configure(self, settings: PersistenceSettings | None) -> None:
        """Use ``settings`` (None: the defaults) for sessions first written from now on
        that no running harness holds (a harness's sessions use what its config chose);
        sessions already being written keep their store. Ignored when pinned."""
        self._stores.configure(settings)

    @property
    def settings(self) -> PersistenceSettings:
        """The settings of sessions no running harness holds (``configure``)."""
        return self._resolve()[0]

    @property
    def backend(self) -> SessionBackend:
        """The store of sessions no running harness holds (``configure``)."""
        return self._resolve()[1]

    def _resolve(
        self, harness: Harness | None = None
    ) -> tuple[PersistenceSettings, SessionBackend]:
        """The settings and store of ``harness``'s sessions (``HarnessStores.resolve``);
        a store of sessions of no harness opened anew may leave the one before unused."""
        reopened = self._stores.current is None
        chosen = self._stores.resolve(harness)
        if reopened and self._stores.current is not None:
            self._close_unused()
        return chosen

    def _close_unused(self) -> None:
        """Close backends that are neither current nor still written by a live session."""
        for backend in self._take_unused():
            backend.close()

    def _take_unused(self) -> list[SessionBackend]:
        """Forget the backends that are neither current nor still written by a live
        session: the caller closes them."""
        keep = {id(w.backend) for w in self._writers.values()}
        keep.update(self._claims.backends())
        keep.update(self._releasing)
        unused = self._stores.take_unused(keep)
        gone = {id(backend) for backend in unused}
        for key in [key for key in self._services if key[0] in gone]:
            del self._services[key]
        return unused

    def close(self) -> None:
        """Write pending checkpoints and release what this plugin opened. It stays usable:
        the next session that needs a store opens it again."""
        if self._checkpoints is not None:
            self._checkpoints.close()
        for backend in self._stores.clear():
            backend.close()
        self._services.clear()
        self._writers.clear()
        self._claims.clear()

    # -- hooks: start-up and shutdown ----------------------------------------------------

    @hookimpl
    def register_settings(self, register: Callable[..., None]) -> None:
        from dsh_persistence._settings import PersistenceSettings

        register(PersistenceSettings)

    @hookimpl
    def register_secrets(self, register: Callable[..., None]) -> None:
        # Kept from the agent's commands whatever the backend: a PostgreSQL password in
        # dsh's environment is one ``env`` away from the model. $DSH_PERSISTENCE_URL goes
        # whole (it is dsh's setting, no command needs it), but only its passwords are
        # hidden in text: the rest of the URL is no secret, and hiding the password
        # also catches it quoted alone (in a libpq error, say). $PGPASSFILE is a path,
        # not a secret: the file is (deny reading it with dsh-permissions).
        from dsh_persistence._postgres_url import passwords_in
        from dsh_persistence._settings import ENV_URL

        register("PGPASSWORD")
        register(ENV_URL, values=passwords_in)

    @hookimpl
    def harness_started(self, harness: Harness) -> None:
        self._stores.started(harness)
        # A password written into the URL (dsh.yml, which commands can read, or pinned
        # settings) is hidden as one in $DSH_PERSISTENCE_URL is, before anything runs.
        settings, backend = self._resolve(harness)
        url = settings.url
        if url:
            from dsh_persistence._postgres_url import passwords_in

            harness.add_secrets(passwords_in(url))
        # A directory that cannot hold sessions (a file, /proc/..., no permission) is
        # reported now, naming the setting and the path, not first at the end of a turn.
        # A harness that starts no agent (dsh models, dsh sessions list) saves no session.
        if harness.starts_agents:
            if self._stores.own_backend is None and settings.backend == "jsonl":
                from dsh_persistence._agent_ids import check_agent_ids

                check_agent_ids(harness.config)  # at their line, not at the first claim
            backend.prepare()

    @hookimpl
    async def harness_stopping(self, harness: Harness) -> None:
        # every agent is disposed and flushed: with no harness left, release everything.
        # A harness whose start failed before this plugin's harness_started stops too:
        # it held nothing, and must not release what a running harness holds.
        if not self._stores.knows(harness):
            return
        import anyio.to_thread

        if not self._stores.stopped(harness):
            await anyio.to_thread.run_sync(self.close)
            return
        # the store of this one is closed unless a running harness or a live session
        # still uses it
        unused = self._take_unused()
        if unused:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_close_all, unused)

    @hookimpl
    def register_commands(self, register: Callable[..., None]) -> None:
        from dsh_persistence._commands import sessions_command

        register(sessions_command(self))

    # -- hooks: the write path -----------------------------------------------------------

    @hookimpl
    def session_event(self, session: Session, event: SessionEvent) -> None:
        if event.type not in CHECKPOINT_AT:
            return
        writer = self._writer(session)
        settings = writer.settings
        if settings is not None and settings.checkpoints:
            if self._checkpoints is None:
                from dsh_persistence._checkpoints import Checkpointer

                self._checkpoints = Checkpointer()
            durable = settings.fsync == "always"
            self._checkpoints.request(writer, settings.checkpoint_delay, durable)

    @hookimpl
    async def session_flush(self, session: Session) -> None:
        import anyio.to_thread

        writer = self._writer(session)
        settings = writer.settings
        durable = settings is None or settings.fsync != "never"
        if not durable and writer.backend.appends_cheaply:
            # A JSONL append hands a few KB to the OS: microseconds, where a worker
            # thread would cost ten times that. A database's write is a transaction
            # that may wait for another process's lock: it leaves the event loop.
            writer.write(False)
            return
        await anyio.to_thread.run_sync(writer.write, durable)

    @hookimpl
    def agent_created(self, agent: Agent) -> None:
        workspace = getattr(agent, "workspace", None)
        writer = self._writer(agent.session)  # it keeps the store that holds the claim open
        if workspace is not None:
            # recorded by the first write (a fork's seed or a resume's closers, logged
            # as the session went live, made the writer before the agent was created)
            self._workspaces[id(agent.session)] = writer.cwd = str(workspace)

    @hookimpl
    async def agent_disposed(self, agent: Agent) -> None:
        session = agent.session
        self._workspaces.pop(id(session), None)
        writer = self._writers.pop(id(session), None)
        if writer is None:
            return
        self._claims.released(writer.backend, session.id)  # a note no writer took, if any
        import anyio.to_thread

        backend = writer.backend
        releasing = self._releasing
        releasing[id(backend)] = releasing.get(id(backend), 0) + 1

        def let_go() -> None:
            backend.release(session.id)  # the claim of a resumed session
            backend.forget(session.id)

        # A server round trip (PostgreSQL's unlock) or a lock file: in a thread, so a
        # server that does not answer holds up this dispose, not the event loop. The
        # dispose returns once the claim is let go (a resume right after finds it free).
        # A backend is closed once no dispose is releasing on it (they run concurrently).
        try:
            await anyio.to_thread.run_sync(let_go)
        finally:
            releasing[id(backend)] -= 1
            if not releasing[id(backend)]:
                del releasing[id(backend)]
            unused = self._take_unused()
            if unused:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(_close_all, unused)

    def _writer(self, session: Session) -> SessionWriter:
        writer = self._writers.get(id(session))
        if writer is None:
            from dsh_persistence._writer import SessionWriter

            settings, backend = self._store_of(session)
            cwd = self._workspaces.get(id(session))
            writer = self._writers[id(session)] = SessionWriter(backend, session, settings, cwd)
        return writer

    def _store_of(self, session: Session) -> tuple[PersistenceSettings, SessionBackend]:
        """Where ``session`` is written: where its claim was taken (noted), which is the
        store of its harness (the core claims through its harness's service), with its
        harness's settings; with neither, the store of sessions of no harness."""
        noted = self._claims.take(session)
        harness = self._stores.harness_of(session)
        if harness is not None:
            settings, backend = self._resolve(harness)
            if noted is None or noted[1] is backend:
                return settings, backend
        return noted or self._resolve()

    # -- hooks: the read path ------------------------------------------------------------

    @hookimpl
    def session_persistence(self, harness: Harness | None) -> StoredSessions:
        from dsh_persistence._service import StoredSessions

        settings, backend = self._resolve(harness)  # the store of the harness that asks
        # one per store and the settings its sessions are written with: harnesses that
        # share a store with settings of their own each write with their own
        key = (id(backend), settings.fsync, settings.checkpoints, settings.checkpoint_delay)
        service = self._services.get(key)
        if service is None:
            is_live = partial(self._is_live, backend)
            made = StoredSessions(backend, is_live, self._claims, settings)
            service = self._services[key] = made
        return service

    def _is_live(self, backend: SessionBackend, session_id: str) -> bool:
        """Whether an agent of this process writes ``session_id`` to ``backend``."""
        return any(
            w.session.id == session_id and w.backend is backend for w in self._writers.values()
        )


def _close_all(backends: list[SessionBackend]) -> None:
    for backend in backends:
        backend.close()
