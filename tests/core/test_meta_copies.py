"""A session's meta shares none of its dicts and lists with what a caller holds (found
by a review of ``dsh._json.copied``): a meta nested 500 to 990 deep passed the check
and then ``agents.create`` raised a RecursionError from the copy (two frames a level);
options' lists were kept as the caller's, so changing them after create changed the
session and what was stored; ``InMemoryPersistence.load`` and a resume or fork of what
it loaded shared nested meta with the store."""

from __future__ import annotations

import sys
from typing import Any

import anyio
from loop_support import LIMIT

from dsh._json import MAX_DEPTH, check_json, copied
from dsh._stored_meta import hidden_meta
from dsh.testing import InMemoryPersistence, ScriptedModel, scripted_harness

OPTIONS = {"model": "scripted"}


DEEP = MAX_DEPTH - 10  # below the limit: the meta and the levels around it


def nested(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    inner = top
    for _ in range(depth):
        inner["k"] = {}
        inner = inner["k"]
    inner["end"] = [1, {"x": "y"}]
    return top


def depth_of(value: dict[str, Any]) -> int:
    depth = 0
    while "k" in value:
        value, depth = value["k"], depth + 1
    return depth


def test_copied_copies_any_depth_without_the_stack() -> None:
    deep = nested(sys.getrecursionlimit() * 5)
    copy = copied(deep)
    assert copy is not deep and depth_of(copy) == depth_of(deep)
    mixed = {"a": [1, [2, {"b": [3]}], {"c": None}], "d": 1.5, "e": "f"}
    copy = copied(mixed)
    assert copy == mixed and list(copy) == list(mixed)
    assert copy["a"] is not mixed["a"] and copy["a"][1][1]["b"] is not mixed["a"][1][1]["b"]


async def test_a_meta_nested_as_deep_as_the_check_takes_is_created_and_stored() -> None:
    """As deep as the check takes (``MAX_DEPTH``, the meta dict itself one level): a
    copy of two frames a level once failed at 700 levels, before the check had a
    limit."""
    meta = {"deep": nested(DEEP)}
    check_json(meta, "session/meta")
    store = InMemoryPersistence()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(["ok"]), plugins=[store]) as h:
            agent = await h.agents.create("m", "s-deep", meta=meta, options=OPTIONS)
            await agent.prompt("hi")
            loaded = await h.agents.load_stored("s-deep")
    assert depth_of(agent.session.meta["deep"]) == DEEP
    assert depth_of(store.stored["s-deep"].meta["deep"]) == DEEP
    assert depth_of(loaded.meta["deep"]) == DEEP


async def test_options_changed_by_their_caller_after_create_leave_the_session_alone() -> None:
    roots = ["/tmp"]
    store = InMemoryPersistence()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(["ok"]), plugins=[store]) as h:
            options = {**OPTIONS, "extra_roots": roots}
            agent = await h.agents.create("m", "s-opts", options=options)
            roots.append("/etc")
            await agent.prompt("hi")
    assert agent.session.meta["options"]["extra_roots"] == ["/tmp"]
    assert store.stored["s-opts"].meta["options"]["extra_roots"] == ["/tmp"]


async def test_loaded_resumed_and_forked_meta_share_nothing_with_the_store() -> None:
    """Nor with the ``StoredSession`` a caller loaded and resumed (``resume_stored``)."""
    store = InMemoryPersistence()
    options = {**OPTIONS, "extra_roots": ["/tmp"]}
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(["ok"] * 3), plugins=[store]) as h:
            agent = await h.agents.create("m", "s1", meta={"tags": ["t"]}, options=options)
            await agent.prompt("hi")
            await agent.dispose()
            changed = await h.agents.load_stored("s1")
            changed.meta["tags"].append("by the caller")
            changed.meta["options"]["extra_roots"].append("/etc")
            loaded = await h.agents.load_stored("s1")
            assert (loaded.meta["tags"], loaded.meta["options"]["extra_roots"]) == (
                ["t"],
                ["/tmp"],
            )
            resumed = await h.agents.resume_stored("r", loaded)
            resumed.session.meta["tags"].append("by the resumed session")
            resumed.session.meta["options"]["extra_roots"].append("/var")
            await resumed.dispose()
            fork = await h.agents.fork("f", "s1", 1, "s1-fork")
            fork.session.meta["tags"].append("by the fork")
            fork.session.meta["options"]["extra_roots"].append("/usr")
    for meta in (loaded.meta, store.stored["s1"].meta):
        assert (meta["tags"], meta["options"]["extra_roots"]) == (["t"], ["/tmp"])


def test_a_meta_as_deep_as_the_check_takes_is_cleared_of_secrets() -> None:
    secret = "sk-test-0123456789"
    meta = {"deep": nested(DEEP), "note": secret}
    check_json(meta, "session/meta")
    hidden = hidden_meta("m", meta, (secret,))
    assert hidden["note"] == "***" and depth_of(hidden["deep"]) == DEEP
