"""Resuming a stored session: loading it through the persistence service, and seeding
the session (and, when the caller gives none, the options) of the agent that continues
it. ``harness.agents.resume``, ``load_stored``, ``resume_stored`` and ``fork`` use these.

A fork is a new session, written now: it is stored as ``agents.create`` stores one, its
options without ``api_key`` and ``api_key_env`` and every secret the harness holds as
``***`` in its meta and in the events it copies (and so in the title a store makes of
them), though an older dsh stored its source with them. A resumed session holds its
meta so too (``_held_meta``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from weakref import WeakValueDictionary

import anyio

from dsh._config_secrets import named_hidden
from dsh._json import copied
from dsh._ready import READY
from dsh._secrets import get_logger, longest_first
from dsh._stored_meta import held_secrets, hidden_meta, hidden_value
from dsh._unapplied import warn_unapplied
from dsh.errors import DshError
from dsh.persistence import StoredSession
from dsh.session import SessionEvent, fork_cut

if TYPE_CHECKING:
    from dsh._relay import HookRelay
    from dsh.harness import Harness
    from dsh.session import Session, SessionStore

__all__ = [
    "damaged",
    "forked",
    "load_session",
    "log_events",
    "resumed_session",
    "sound",
    "stored_options",
]

log = get_logger(__name__)

#: What ``sound`` returned, while it lives, by ``_key``: not checked again.
_SOUND: WeakValueDictionary[tuple[int, int], StoredSession] = WeakValueDictionary()


def _key(stored: StoredSession) -> tuple[int, int]:
    """``stored``'s id and its log's length (a log grown or cut since is checked anew)."""
    return id(stored), len(stored.events)


async def load_session(
    relay: HookRelay,
    session_id: str,
    harness: Harness | None = None,
    env: Mapping[str, str] | None = None,
    check: Callable[[], None] = lambda: None,
) -> StoredSession:
    """The stored session ``session_id`` from the persistence service ``relay`` finds
    for ``harness``; DshError saying why there is none (no persistence plugin loaded:
    naming the switch that left it out of ``harness``, read from ``env``; or the session
    is not stored).
    ``check`` raises when the caller may no longer go on (the harness is leaving): called
    once the service is found, before the store is read."""
    persistence = await relay.session_persistence(harness)
    check()
    if persistence is None:
        from dsh._no_store import STORE, no_store

        if harness is not None:  # names the switch that left persistence out
            why = no_store(harness.pm, env, cli=False)
        else:
            why = f"install dsh-persistence, or enable it with select=[{STORE!r}]"
        raise DshError(
            f"cannot resume session {session_id!r}: no persistence plugin is loaded ({why})"
        )
    stored = await persistence.load(session_id)
    if stored is None:
        raise DshError(f"cannot resume session {session_id!r}: it is not stored")
    return stored


def resumed_session(
    sessions: SessionStore,
    stored: StoredSession,
    options: dict[str, Any] | None,
    harness: Harness | None = None,
    *,
    agent_id: str,
) -> tuple[Session, dict[str, Any] | None, list[SessionEvent]]:
    """The session agent ``agent_id`` continuing ``stored`` gets (its events, meta and
    creation time), its options, and the events it is to log once it is live
    (``log_events``), which it is prepared without: a fork's seed (all its events: the
    fork is a new session, stored from its first event) and the closers ``sound`` added
    to ``stored``'s events. A warning names a plugin of dsh's whose history reducers
    folded some of the events and that is not loaded now (``dsh._unapplied``).
    The options: ``options``, or without them the ones the session was created with
    (stored in its meta when they were JSON), checked against ``harness`` as
    ``agents.create`` checks its own: a bad one is a ``DshError`` naming the session (a
    fork's source) and ``options=`` (``check_stored``). A fork's copy (``forked``) is
    cleared of the secrets ``harness`` holds first: the agent goes on as a resume of the
    stored fork would."""
    named = stored.id
    stored = sound(stored)
    # once per resume: a plugin whose reducers folded some of its events is not loaded
    pm = None if harness is None else harness.pm
    warn_unapplied(stored.id, stored.events, sessions.reducers, pm)
    logged: list[SessionEvent] = []  # logged once live: the seed, the closers
    if isinstance(stored, _Closed):
        loaded, logged = stored.events[: stored.loaded], stored.events[stored.loaded :]
        stored = StoredSession(stored.id, stored.created, loaded, stored.meta)
    if isinstance(stored, _Fork):
        named = str(stored.meta.get("parent", stored.id))
        stored = _cleared(stored, held_secrets(harness), agent_id)
        logged = [*stored.events, *logged]  # the seed, told like any event
        stored = StoredSession(stored.id, stored.created, [], stored.meta)
    if options is None:
        options = stored_options(stored)
        if options is not None and harness is not None:
            from dsh._code_options import check_stored

            check_stored(harness, agent_id, stored, options, named)
    meta = _held_meta(stored.meta, harness)
    session = _prepared(sessions, stored.id, stored.events, meta, stored.created)
    return session, options, logged


def _held_meta(meta: dict[str, Any], harness: Harness | None) -> dict[str, Any]:
    """A copy of a stored session's ``meta`` as its resumed session holds it (what
    plugins read): each value under a secret's name and each secret ``harness`` holds
    as ``***``, as a new session's meta is stored. An older dsh stored them in the
    clear; the stored session is left as it is, and the options rebuilt from it are
    taken before (``stored_options``)."""
    named = named_hidden(meta, sections=("options",))[0]
    hidden: dict[str, Any] = hidden_value(named, held_secrets(harness))
    return hidden


def _prepared(
    sessions: SessionStore,
    id: str,
    events: Sequence[SessionEvent],
    meta: dict[str, Any],
    created: float | None = None,
) -> Session:
    """``sessions.prepare``, its log folded into the history; a ``_BrokenLog`` (the
    session is damaged) when a core reducer cannot fold one of its events (what the
    invariants do not check: an answer's content blocks). A plugin's reducer that
    fails raises its ``HistoryReducerError``."""
    try:
        return sessions.prepare(id, events, meta=meta, created=created)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # ValidationError too
        from dsh._secrets import redact
        from dsh.errors import exception_words

        raise _BrokenLog(
            f"cannot resume session {id!r}: the log the persistence backend loaded cannot "
            "be folded into a history: " + redact(exception_words(exc))
        ) from exc


async def log_events(session: Session, events: Sequence[SessionEvent]) -> None:
    """Log ``events`` (``resumed_session``'s: a fork's seed, the closers) on
    ``session``, live now, through its observer like any event, each at its time and
    with its data (the reducers fold it as a loaded log is folded): a persistence plugin
    that stores what ``session_event`` tells it stores them with its next flush, ahead
    of the new turn. An async observer's work is awaited shielded, as the loop's
    closers are: a start cancelled meanwhile never leaves an observer without some of
    them."""
    for event in events:
        pending = session._record(event.type, dict(event.data), at=event.time)
        if pending is not READY:
            with anyio.CancelScope(shield=True):
                await pending


#: The code of dsh-persistence's ``SessionCorruptError`` (a plugin's type: not imported).
_CORRUPT = "SESSION_CORRUPT"


class _BrokenLog(DshError):
    """The log a backend loaded breaks the invariants (``sound``)."""


def damaged(error: DshError) -> bool:
    """Whether ``error``, of a load of a stored session, says the session is damaged:
    its store found it corrupt (``SESSION_CORRUPT``) or its log breaks the invariants
    (``sound``), so every load of it fails alike (``--continue`` says how to go on)."""
    return isinstance(error, _BrokenLog) or error.code == _CORRUPT


def sound(stored: StoredSession) -> StoredSession:
    """``stored`` as the core may continue it: its last turn, if a crash left it open
    (which the backend's ``load`` should have closed), closed by ``close_turn``'s
    synthetic events, as dsh-persistence closes one, with a warning (a ``_Closed``: a
    session resumed from it logs them anew, ``log_events``); a ``DshError``
    naming the session and the first problem when the log breaks the invariants in any
    other way (a hole, a turn opened inside another, a result without its call): the
    core never continues such a log. What this returned is not checked again (``dsh
    sessions resume`` checks with ``load_stored``, then resumes with ``resume_stored``:
    on a long log each check costs tens of milliseconds)."""
    from dsh.invariants import check_invariants, close_turn

    if _SOUND.get(_key(stored)) is stored:
        return stored
    problems = check_invariants(stored.events, complete=False)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise _BrokenLog(
            f"cannot resume session {stored.id!r}: the log the persistence backend "
            f"loaded breaks the log invariants: {problems[0]}{more} (only a last turn "
            "left open is repaired on load)"
        )
    closers = close_turn(stored.events)
    if not closers:
        _SOUND[_key(stored)] = stored
        return stored
    log.warning(
        "session %s: the persistence backend returned it with its last turn open (turn %s, "
        "cut off by a crash) where its load should have closed it; closed now as "
        "interrupted, its tool calls without a result answered as of unknown outcome",
        stored.id,
        closers[-1].data["turn"],
    )
    events = [*stored.events, *closers]
    closed = _Closed(stored.id, stored.created, events, copied(stored.meta))
    object.__setattr__(closed, "loaded", len(stored.events))
    _SOUND[_key(closed)] = closed
    return closed


class _Closed(StoredSession):
    """``sound``'s ``stored`` with its open last turn closed: its first ``loaded``
    events are the ones the backend returned, the rest the closers."""

    __slots__ = ("loaded",)
    loaded: int


def stored_options(stored: StoredSession, fork: str | None = None) -> dict[str, Any] | None:
    """A copy of the options ``stored`` was created with (None: none stored, or not
    JSON). ``api_key`` and ``api_key_env``, which dsh refuses as options now, are left
    out with a warning (an older dsh stored them, the key in the clear): refused, they
    would leave the session impossible to continue. ``fork``: the id of the fork of
    ``stored`` they are for, which the warning names."""
    kept = stored.meta.get("options")
    if not isinstance(kept, dict):
        return None
    options = {k: copied(v) for k, v in kept.items() if k not in ("api_key", "api_key_env")}
    went_on = "continued without it" if fork is None else f"its fork {fork} is stored without it"
    if "api_key" in kept:
        log.warning(
            "session %s was stored with an api_key option (its value, a key in the clear, "
            "is in the stored session: rotate that key, and delete the session when it is "
            "no longer needed); %s: a model's key comes from the variable its "
            "api_key_env names",
            stored.id,
            went_on,
        )
    elif "api_key_env" in kept:
        log.warning(
            "session %s was stored with an api_key_env option, which nothing read; "
            "%s (it goes on the model's entry of models:)",
            stored.id,
            went_on,
        )
    return options


async def forked(
    load: Callable[[str], Awaitable[StoredSession]],
    sessions: SessionStore,
    stored: StoredSession,
    new_id: str,
    turns: int,
) -> StoredSession:
    """``stored``'s log up to the end of turn ``turns`` as session ``new_id`` (its meta
    names its ``parent`` and ``seed_length``: ``SessionStore.fork``; its options are
    without ``api_key`` and ``api_key_env``, a warning naming ``stored``), to be cleared
    of the harness's secrets by ``resumed_session``; DshError when ``new_id`` is stored
    already (asked with ``load``: a fork never writes over a session)."""
    try:
        await load(new_id)
    except DshError:
        pass
    else:
        raise DshError(f"cannot fork session {stored.id!r} into {new_id!r}: it is stored already")
    meta = copied(stored.meta)
    old_key: tuple[str, ...] = ()
    if isinstance(options := meta.get("options"), dict):
        meta["options"] = stored_options(stored, new_id)
        if isinstance(key := options.get("api_key"), str):  # no variable may hold it now
            old_key = longest_first([key])
    # only the kept part is folded: a later event a reducer now refuses stops no fork
    kept = stored.events[: fork_cut(stored.id, stored.events, turns)]
    source = _prepared(sessions, stored.id, kept, meta)
    copy = sessions.fork(source, new_id, turns)
    return _Fork(new_id, copy.created, _hidden_events(copy.events, old_key), dict(copy.meta))


class _Fork(StoredSession):
    """A fork's copy (``forked``), not stored yet."""

    __slots__ = ()


def _cleared(fork: _Fork, secrets: tuple[str, ...], agent_id: str) -> StoredSession:
    """``fork`` with each of ``secrets`` as ``***`` in its meta (``hidden_meta``, which
    warns of what held one, naming ``agent_id``) and in its events' data. Its meta is
    cleared with none held too: a value under a secret's name (an older dsh stored a
    nested ``token`` as given) is hidden by that name."""
    meta = hidden_meta(agent_id, fork.meta, secrets)
    return StoredSession(fork.id, fork.created, _hidden_events(fork.events, secrets), meta)


def _hidden_events(events: Sequence[SessionEvent], secrets: tuple[str, ...]) -> list[SessionEvent]:
    """``events`` with each of ``secrets`` as ``***`` in their data."""
    if not secrets:
        return list(events)
    return [SessionEvent(e.type, e.seq, e.time, hidden_value(e.data, secrets)) for e in events]
