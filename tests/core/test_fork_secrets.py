"""``harness.agents.fork`` of a session an older dsh stored with secrets in it (an
``api_key`` option in the clear, a key in an option and in its log): the fork is a new
session, written now, so it is cleared as ``agents.create`` clears a new one. Was: its
header meta and events were the source's, keys and all, and the warning named the fork
as the session "stored with an api_key option"."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import Any, NamedTuple

import pytest

from dsh import hookimpl
from dsh.persistence import StoredSession
from dsh.session import SessionEvent
from dsh.testing import InMemoryPersistence, ScriptedModel, scripted_harness, text

KEY = "sk-test-Qw3rTy7uI9oP1aS2dF4gH6jK8lZ0xC5vB7nM9q1W"  # a built-in provider's variable
OWN = "gw-live-Zx81Lm02Nq93Rp74St65Uv46Wx37Yz28Ab19"  # $OWN_KEY, the config's api_key_env
ADDED = "pk-PluginS3cret9988776655443322110099AaBbCc"  # a plugin's, by add_secrets
CONFIG = (
    "models:\n  gw: {provider: openai-compatible, model: m, base_url: "
    "'http://127.0.0.1:9/v1', api_key_env: OWN_KEY}\n"
)
SOURCE = "main-session-old"


class AddsSecret:
    @hookimpl
    def harness_started(self, harness: Any) -> None:
        harness.add_secrets([ADDED])


def _old_session(options: dict[str, Any]) -> StoredSession:
    """A session as an older dsh stored it: the options as given, the log as typed."""
    now = time.time()
    reply = {"role": "assistant", "content": [{"type": "text", "text": f"ok {KEY}"}]}
    reply |= {"stop_reason": "stop", "usage": {"input_tokens": 1, "output_tokens": 1}}
    events = [
        ("turn/start", {"turn": 1}),
        ("user/message", {"content": f"my key {OWN} and {ADDED}"}),
        ("step/start", {"turn": 1, "step": 1}),
        ("assistant/message", {"message": {**reply, "model": "scripted"}}),
        ("step/end", {"turn": 1, "step": 1}),
        ("turn/end", {"turn": 1, "reason": "completed"}),
    ]
    return StoredSession(
        SOURCE,
        now,
        [SessionEvent(kind, seq, now, data) for seq, (kind, data) in enumerate(events)],
        {"agent": "main", "options": options},
    )


@pytest.mark.parametrize("given", [None, {"model": "scripted"}], ids=["stored", "given"])
async def test_a_fork_is_stored_without_the_secrets_of_its_source(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, given: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OWN_KEY", OWN)
    store = InMemoryPersistence()
    options = {"model": "scripted", "api_key": KEY, "tone": OWN, "note": [f"x {ADDED}"]}
    store.stored[SOURCE] = _old_session(options)
    plugins = [("mem", store), ("adds", AddsSecret())]
    model = ScriptedModel([text("fine")])
    caplog.set_level(logging.WARNING)
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, config_text=CONFIG
    ) as harness:
        fork = await harness.agents.fork("main", SOURCE, 1, "forked-1", given)
        await fork.dispose()
    stored = store.stored["forked-1"]
    written = repr(stored.meta) + repr([e.data for e in stored.events])
    for secret in (KEY, OWN, ADDED):
        assert secret[:24] not in written and secret[-24:] not in written, written
    assert stored.meta["options"] == {"model": "scripted", "tone": "***", "note": ["x ***"]}
    assert stored.meta["parent"] == SOURCE
    assert stored.events[1].data == {"content": "my key *** and ***"}
    assert stored.events[3].data["message"]["content"][0]["text"] == "ok ***"
    said = [r.getMessage() for r in caplog.records if "api_key option" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith(f"session {SOURCE} was stored with"), said
    assert "forked-1" in said[0]
    # the source is left as it was stored
    assert store.stored[SOURCE].meta["options"] == options
    assert OWN in store.stored[SOURCE].events[1].data["content"]


async def test_a_forks_events_are_cleared_of_an_old_api_key_no_variable_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The key an older dsh stored as the ``api_key`` option was rotated: no variable
    holds it now, so only the option's value says what to hide in the copied log."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OWN_KEY"):
        monkeypatch.delenv(name, raising=False)
    old = "sk-old-rotated-Zq8Wm3Xn5Bv7Lk2Jh4Gf6Ds9Aa"
    store = InMemoryPersistence()
    store.stored[SOURCE] = _old_session({"model": "scripted", "api_key": old})
    store.stored[SOURCE].events[1].data["content"] = f"use {old} for it"
    async with scripted_harness(
        ScriptedModel([]), plugins=[("mem", store)], load_entry_points=False
    ) as harness:
        fork = await harness.agents.fork("main", SOURCE, 1, "forked-old")
        await fork.dispose()
    stored = store.stored["forked-old"]
    assert stored.meta["options"] == {"model": "scripted"}
    assert stored.events[1].data == {"content": "use *** for it"}
    assert old not in repr([e.data for e in stored.events])


async def test_the_warning_of_a_forks_hidden_option_names_the_forks_agent(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OWN_KEY", OWN)
    store = InMemoryPersistence()
    store.stored[SOURCE] = _old_session({"model": "scripted", "tone": OWN})
    caplog.set_level(logging.WARNING)
    async with scripted_harness(
        ScriptedModel([]), plugins=[("mem", store)], load_entry_points=False, config_text=CONFIG
    ) as harness:
        fork = await harness.agents.fork("reviewer", SOURCE, 1, "forked-9")
        await fork.dispose()
    said = [r.getMessage() for r in caplog.records if "held a secret" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("agent 'reviewer': option 'tone'"), said


class _AsTyped(InMemoryPersistence):
    """A store whose ``load`` gives back the events as they were given to it."""

    async def load(self, session_id: str) -> StoredSession | None:
        return self.stored.get(session_id)


class _Pair(NamedTuple):
    text: str
    more: list[Any]


class _Listed(list[Any]):
    pass


@pytest.mark.parametrize(
    "kind", [tuple, _Pair, OrderedDict, _Listed], ids=["tuple", "namedtuple", "OrderedDict", "list"]
)
async def test_a_tuple_or_subclass_in_a_stored_events_data_is_cleared_of_secrets_on_fork(
    monkeypatch: pytest.MonkeyPatch, kind: Any
) -> None:
    """A third-party store's ``load`` may give back a tuple where JSON has a list (it
    is written as one), or a subclass of dict, list or tuple (an ``OrderedDict`` from
    ``object_pairs_hook``, a namedtuple): its strings are cleared like a list's, and it
    is copied as a plain dict or list. Was: only exact dicts and lists were walked, and
    the fork was stored with the key in the clear."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    store = _AsTyped()
    store.stored[SOURCE] = _old_session({"model": "scripted"})
    held = ("typed", [f"key {KEY}", (KEY,)])
    if kind is OrderedDict:
        store.stored[SOURCE].events[1].data["sources"] = OrderedDict(typed=held[1])
    else:
        store.stored[SOURCE].events[1].data["sources"] = (
            kind(held) if kind is not _Pair else _Pair(*held)
        )
    async with scripted_harness(
        ScriptedModel([]), plugins=[("mem", store)], load_entry_points=False
    ) as harness:
        fork = await harness.agents.fork("main", SOURCE, 1, "forked-tuple")
        await fork.dispose()
    data = store.stored["forked-tuple"].events[1].data
    hidden = ["key ***", ["***"]]
    assert data["sources"] == ({"typed": hidden} if kind is OrderedDict else ["typed", hidden])
    assert type(data["sources"]) in (dict, list)
    assert KEY[:24] not in repr(data)


async def test_a_fork_hides_an_old_sessions_nested_secret_when_the_harness_holds_none(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A session stored before options were checked at any depth may hold a token nested
    in an option, which no variable holds: the fork, a new session, is stored with it
    hidden by its name, as ``agents.create`` stores one. Was: with no secret held (no
    model key in the environment) the fork's meta was not cleared at all, and the token
    was written again in the clear."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OWN_KEY"):
        monkeypatch.delenv(name, raising=False)
    token = "tok-nested-Rt5Yu8Io2Pa4Sd6Fg9Hj1Kl3"
    options = {"model": "scripted", "gw": {"hosts": [{"name": "a", "token": token}]}}
    store = InMemoryPersistence()
    store.stored[SOURCE] = _old_session(options)
    caplog.set_level(logging.WARNING)
    async with scripted_harness(
        ScriptedModel([]), plugins=[("mem", store)], load_entry_points=False
    ) as harness:
        assert harness.secrets() == ()
        fork = await harness.agents.fork("main", SOURCE, 1, "forked-nested", {"model": "scripted"})
        await fork.dispose()
    stored = store.stored["forked-nested"]
    assert stored.meta["options"]["gw"] == {"hosts": [{"name": "a", "token": "***"}]}
    assert token not in repr(stored.meta)
    said = [r.getMessage() for r in caplog.records if "under a secret's name" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("agent 'main': option 'gw'"), said
    assert store.stored[SOURCE].meta["options"] == options  # the source as it was stored
