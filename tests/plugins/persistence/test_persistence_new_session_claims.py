"""A session not stored yet is claimed too, from the moment its agent is created: a
second process that creates (or forks into) the same id is refused at once, before its
model is asked anything. The JSONL backend recorded such a claim in memory only (its
lock was the session file's, which the first save makes): the second process ran a
whole turn, tools included, and stored it; the first one's turn then failed to save
(``SessionConflictError``). SQLite and PostgreSQL refused the second process at once.

As in test_persistence_claims.py, "another process" is another backend (or
``PersistencePlugin``) over the same store, and a real process where it says so. Every
test runs once per backend (``any_store``: the three; ``settings``: those with files).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from claims_support import claimed_elsewhere, files_of, harness_over, killed, stored_files

from dsh.errors import DshError
from dsh.testing import ScriptedModel, run_turn, text
from dsh_persistence import (
    PersistenceSettings,
    SessionConflictError,
    SessionInfo,
    SessionInUseError,
    open_backend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]

INFO = SessionInfo("new", 1.0)


async def test_a_new_session_is_refused_to_another_process_before_its_model_is_asked(
    any_store: PersistenceSettings,
) -> None:
    """The reviewer's case: A creates session "same" and waits before its first prompt;
    B creates "same" too: refused at once, and A's turn is stored."""
    async with harness_over(any_store, ScriptedModel([text("A's answer")])) as first:
        agent = await first.agents.create("a", session_id="same", options={"model": "scripted"})
        late_model = ScriptedModel([text("B's answer")])
        async with harness_over(any_store, late_model) as second:
            with pytest.raises(SessionInUseError) as caught:
                await second.agents.create("b", session_id="same", options={"model": "scripted"})
            location = open_backend(any_store).location
            assert str(caught.value) == (
                "session 'same' is in use: another process or harness is continuing it "
                f"(stored in {location}); try again when it is done"
            )
            assert second.agents.get("b") is None
            assert late_model.requests == []
        with anyio.fail_after(10):
            events = await run_turn(agent, "A's prompt")
        assert events[-1].data["reason"] == "completed"
        await agent.dispose()

        # disposed and stored: a new agent given the id is refused as for any stored one
        async with harness_over(any_store, ScriptedModel([])) as third:
            with pytest.raises(SessionConflictError, match="'same' is stored already"):
                await third.agents.create("c", session_id="same", options={"model": "scripted"})
    backend = open_backend(any_store)
    try:
        loaded = backend.load("same")
        assert loaded is not None
        prompts = [e.data["content"] for e in loaded.stored.events if e.type == "user/message"]
        assert prompts == ["A's prompt"]
    finally:
        backend.close()
    assert files_of(any_store) == stored_files(any_store, "same")


def test_a_claim_of_a_session_not_stored_yet_holds_until_released(
    any_store: PersistenceSettings,
) -> None:
    """Held from ``claim`` through the first save to ``release``: another instance can
    neither claim the session nor store it meanwhile; the listing shows no lock file;
    released, the session is free and the store holds nothing but its sessions."""
    log = LogBuilder()
    log.turn("one")
    log.turn("two")
    mine, theirs = open_backend(any_store), open_backend(any_store)
    try:
        mine.prepare()
        assert mine.claim("new")
        assert not theirs.claim("new")
        with pytest.raises(SessionInUseError, match="is continuing it"):
            theirs.append(INFO, log.events[:9], durable=True)
        assert theirs.tail("new") is None  # the refused writer stored nothing
        assert theirs.headers() == []  # no session, and no lock file taken for one
        assert mine.claim("other")  # one claim does not hold another session
        mine.release("other")

        mine.append(INFO, log.events[:9], durable=True)  # the first save: still held
        assert not theirs.claim("new")
        with pytest.raises(SessionInUseError, match="is continuing it"):
            theirs.append(INFO, log.events[9:], durable=True)
        mine.append(INFO, log.events[9:], durable=True)
        assert [header.id for header in theirs.headers()] == ["new"]

        mine.release("new")
        assert theirs.claim("new")
        theirs.release("new")
    finally:
        mine.close()
        theirs.close()
    assert files_of(any_store) == stored_files(any_store)


def test_a_claim_of_a_session_never_stored_leaves_nothing_behind(
    any_store: PersistenceSettings,
) -> None:
    """Released (or its store closed) before anything was saved: no lock file stays,
    and the session is free."""
    mine, theirs = open_backend(any_store), open_backend(any_store)
    try:
        mine.prepare()
        assert mine.claim("new")
        mine.release("new")
        assert files_of(any_store) == stored_files(any_store)[1:]  # SQLite: not the database
        assert theirs.claim("new")
        assert not mine.claim("new")
        theirs.close()
        assert mine.claim("new")
        mine.release("new")
    finally:
        mine.close()
        theirs.close()
    assert files_of(any_store) == stored_files(any_store)[1:]


def test_a_killed_process_claim_of_a_new_session_ends_with_it(
    settings: PersistenceSettings,
) -> None:
    """A real process claims a session not stored yet, and is killed outright (``kill
    -9``): its claim ends with it, and another process takes the session over."""
    backend = open_backend(settings)
    with claimed_elsewhere(settings, "new") as holder:
        assert not backend.claim("new")
        killed(holder)
    try:
        assert backend.claim("new")
        backend.append(INFO, LogBuilder().turn("one"), durable=True)
        backend.release("new")
    finally:
        backend.close()
    assert files_of(settings) == stored_files(settings)


async def test_a_fork_into_an_id_another_process_forks_into_is_refused(
    any_store: PersistenceSettings,
) -> None:
    """Two processes fork into one new id: the second is refused before its model is
    asked, whether the first one's copy is stored yet ("stored already") or not ("in
    use"), and the first goes on."""
    async with harness_over(any_store, ScriptedModel([text("one"), text("two")])) as first:
        source = await first.agents.create("a", options={"model": "scripted"})
        await run_turn(source, "first")
        await source.dispose()
        fork = await first.agents.fork("b", source.session.id, 1, "branch")
        late_model = ScriptedModel([text("never")])
        async with harness_over(any_store, late_model) as second:
            with pytest.raises(DshError, match=r"is in use|stored already"):
                await second.agents.fork("c", source.session.id, 1, "branch")
            assert second.agents.get("c") is None
            assert late_model.requests == []
        with anyio.fail_after(10):
            events = await run_turn(fork, "second")
        assert events[-1].data["reason"] == "completed"


def test_a_claimed_session_deleted_by_its_holder_stays_claimed_until_stored_anew(
    settings: PersistenceSettings,
) -> None:
    """The holder deletes the session it claims (JSONL: its claim was the lock of the
    removed file): no other process claims it before the holder stores it anew."""
    log = LogBuilder()
    log.turn("one")
    holder, other = open_backend(settings), open_backend(settings)
    try:
        holder.prepare()
        assert holder.claim("new")
        holder.append(INFO, log.events, durable=True)
        assert holder.delete("new")
        assert not other.claim("new")
        holder.append(INFO, log.events, durable=True)  # the whole log again, from seq 0
        assert not other.claim("new")
        holder.release("new")
        assert other.claim("new")
        other.release("new")
    finally:
        holder.close()
        other.close()
    assert files_of(settings) == stored_files(settings)


def test_a_jsonl_claim_whose_lock_file_was_removed_is_taken_again_or_lost(
    tmp_path: Path,
) -> None:
    """The lock file of a claim of a session not stored, removed while held (a user
    tidying dotfiles), no longer keeps another process out: the first save takes it
    again when no one else did, and is refused, writing nothing, when another process
    claimed the session meanwhile (as SQLite's claims)."""
    from dsh_persistence import JsonlBackend
    from dsh_persistence._jsonl_locks import claim_path

    directory = tmp_path / "sessions"
    lock = claim_path(directory / "new.jsonl")
    log = LogBuilder()
    log.turn("one")
    holder, other = JsonlBackend(directory), JsonlBackend(directory)
    try:
        assert holder.claim("new")
        assert lock.exists()
        lock.unlink()
        holder.append(INFO, log.events[:3], durable=True)  # taken again, then let go
        assert not other.claim("new")
        holder.release("new")
        assert sorted(p.name for p in directory.iterdir()) == ["new.jsonl"]

        assert holder.claim("other")
        claim_path(directory / "other.jsonl").unlink()
        assert other.claim("other")  # the lock file it made is the claim now
        with pytest.raises(SessionInUseError, match="cannot store session 'other'"):
            holder.append(SessionInfo("other", 1.0), log.events[:3], durable=True)
        assert other.tail("other") is None  # nothing was written
        holder.release("other")
        assert claim_path(directory / "other.jsonl").exists()  # not the holder's to remove
        assert not holder.claim("other")
    finally:
        holder.close()
        other.close()
    assert sorted(p.name for p in directory.iterdir()) == ["new.jsonl"]


def test_two_writers_without_a_claim_storing_one_new_session_meet_as_a_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second meets the first mid-publish (holding the lock file a claim of the
    session would hold): it waits for its turn, then finds the session stored
    (``SessionConflictError``), not "in use" as a claim would have it."""
    import threading

    from dsh_persistence import JsonlBackend, _jsonl

    directory = tmp_path / "sessions"
    first, second = JsonlBackend(directory), JsonlBackend(directory)
    reached, go = threading.Event(), threading.Event()
    real = _jsonl.publish
    outcomes: dict[str, BaseException | None] = {}

    def paused(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "first":
            reached.set()
            assert go.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(_jsonl, "publish", paused)

    def store(backend: JsonlBackend, by: str) -> None:
        log = LogBuilder()
        log.turn(by)
        try:
            backend.append(INFO, log.events, durable=False)
            outcomes[by] = None
        except BaseException as exc:  # checked below
            outcomes[by] = exc

    one = threading.Thread(target=store, args=(first, "first"), name="first")
    two = threading.Thread(target=store, args=(second, "second"), name="second")
    one.start()
    try:
        assert reached.wait(30)
        two.start()
        two.join(0.5)
        assert two.is_alive(), f"the second did not wait: {outcomes}"
    finally:
        go.set()
        one.join(30)
        two.join(30)
    assert outcomes["first"] is None
    assert type(outcomes["second"]) is SessionConflictError, outcomes
    assert "another writer stored this session meanwhile" in str(outcomes["second"])
    loaded = first.load("new")
    assert loaded is not None
    assert [e.data["content"] for e in loaded.stored.events if e.type == "user/message"] == [
        "first"
    ]
    first.close()
    second.close()
    assert sorted(p.name for p in directory.iterdir()) == ["new.jsonl"]
