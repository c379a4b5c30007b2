"""Arguments of the wrong kind given to the calls a program embedding dsh makes, refused
at the call with an error naming the argument (found by a review of embedding dsh from
Python): ``agents.create(5)`` failed with an ``AttributeError`` from inside the id check,
``options="model=x"`` with one from the options check, ``meta="x"`` with ``dict()``'s
``ValueError``; ``meta={"x": object()}`` was taken, then every save with dsh-persistence
failed (``InMemoryPersistence`` stored it); ``prompt(42)`` logged ``"42"`` and ran a
turn where ``send(42)`` is a ``TypeError``; ``Harness(plugins="abc")`` registered a
plugin per letter and ``select="no:persistence"`` listed single characters."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from loop_support import LIMIT

from dsh import DshError
from dsh.harness import Harness
from dsh.persistence import StoredSession
from dsh.plugins import create_plugin_manager
from dsh.testing import InMemoryPersistence, ScriptedModel, scripted_harness

OPTIONS = {"model": "scripted"}
EMPTY = "a prompt may not be empty: there is nothing to send the model"

Call = Callable[[Any], Awaitable[object]]

# (call, the wrong value's parameter, the value, what the message says is taken)
WRONG: list[tuple[str, str, object, str]] = [
    ("create", "agent_id", 5, "a str, not an int"),
    ("create", "agent_id", None, "a str, not None"),
    ("create", "session_id", 7, "a str or None, not an int"),
    ("create", "meta", "x", "a dict or None, not a str"),
    ("create", "meta", [("a", 1)], "a dict or None, not a list"),
    ("create", "options", "model=scripted", "a dict or None, not a str"),
    ("create", "options", [("model", "scripted")], "a dict or None, not a list"),
    ("create", "workspace", 3, "a str, a path or None, not an int"),
    ("resume", "agent_id", 5, "a str, not an int"),
    ("resume", "resume_session_id", 7, "a str, not an int"),
    ("resume", "options", "model=scripted", "a dict or None, not a str"),
    ("fork", "session_id", 7, "a str, not an int"),
    ("fork", "turns", "1", "an int, not a str"),
    ("fork", "new_session_id", 7, "a str or None, not an int"),
    ("fork", "options", ["model"], "a dict or None, not a list"),
    # these two were not checked: an AttributeError from inside, or a store's own error
    ("resume_stored", "agent_id", 5, "a str, not an int"),
    ("resume_stored", "stored", "s", "a StoredSession, not a str"),
    ("resume_stored", "options", "model=scripted", "a dict or None, not a str"),
    ("resume_stored", "workspace", 3, "a str, a path or None, not an int"),
    ("load_stored", "session_id", 7, "a str, not an int"),
    ("load_stored", "session_id", None, "a str, not None"),
]


def _call(h: Harness, call: str, name: str, value: object) -> Awaitable[object]:
    args: dict[str, Any] = {
        "create": {"agent_id": "a", "options": OPTIONS},
        "resume": {"agent_id": "a", "resume_session_id": "s"},
        "fork": {"agent_id": "a", "session_id": "s", "turns": 1},
        "resume_stored": {"agent_id": "a", "stored": StoredSession("s", 0.0, [], {})},
        "load_stored": {"session_id": "s"},
    }[call]
    args[name] = value
    method: Callable[..., Awaitable[object]] = getattr(h.agents, call)
    return method(**args)


@pytest.mark.parametrize(
    ("call", "name", "value", "taken"), WRONG, ids=[f"{c}-{n}-{v!r}" for c, n, v, _ in WRONG]
)
async def test_a_wrong_type_of_argument_is_a_type_error_naming_it(
    call: str, name: str, value: object, taken: str
) -> None:
    store = InMemoryPersistence()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel([]), plugins=[store]) as h:
            with pytest.raises(TypeError) as refused:
                await _call(h, call, name, value)
            assert str(refused.value) == f"agents.{call}({name}=...) takes {taken}"
            assert h.agents.list() == [] and h.sessions.list() == []
    assert store.stored == {}


@pytest.mark.parametrize(
    ("meta", "where"),
    [
        ({"x": object()}, "meta.x: object values are not lossless JSON"),
        ({"a": [1, {"b": float("nan")}]}, "meta.a[1].b: nan is not representable in JSON"),
        ({"pair": (1, 2)}, "meta.pair: tuple values are not lossless JSON (got (1, 2))"),
        ({1: "one"}, "meta: key 1 is a int, not a str"),
        ({"a.b": {"when": b"x"}}, 'meta["a.b"].when: bytes values are not lossless JSON'),
    ],
    ids=["object", "nan", "tuple", "int-key", "bytes"],
)
async def test_a_meta_that_is_not_lossless_json_is_refused_at_create(
    meta: dict[Any, Any], where: str
) -> None:
    store = InMemoryPersistence()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel([]), plugins=[store]) as h:
            with pytest.raises(DshError) as refused:
                await h.agents.create("m", meta=meta, options=OPTIONS)
            assert str(refused.value).startswith(f"agents.create(meta=...): at {where}")
            assert str(refused.value).endswith("; a session's meta is stored as JSON")
            assert h.agents.list() == [] and h.sessions.list() == []
            agent = await h.agents.create("m", meta={"user": "u1", "tags": ["a"]}, options=OPTIONS)
            await agent.prompt("hi")
    assert store.stored[agent.session.id].meta["tags"] == ["a"]


async def test_a_meta_changed_by_its_caller_after_create_leaves_the_session_alone() -> None:
    """``meta`` is copied at any depth: a caller reusing its dict (a template of a user's
    tags) does not change a session created from it."""
    store = InMemoryPersistence()
    meta: dict[str, Any] = {"user": {"name": "u1"}, "tags": ["a", {"k": [1]}]}
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(["ok"]), plugins=[store]) as h:
            agent = await h.agents.create("m", meta=meta, options=OPTIONS)
            meta["user"]["name"] = "u2"
            meta["tags"].append("b")
            meta["tags"][1]["k"].append(2)
            await agent.prompt("hi")
            agent.session.meta["tags"][1]["k"].append(3)  # the store's is its own too
    live, stored = agent.session.meta, store.stored[agent.session.id].meta
    assert (live["user"], live["tags"]) == ({"name": "u1"}, ["a", {"k": [1, 3]}])
    assert (stored["user"], stored["tags"]) == ({"name": "u1"}, ["a", {"k": [1]}])


async def test_the_double_refuses_a_meta_made_unstorable_after_create_as_the_stores_do() -> None:
    store = InMemoryPersistence()
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(["ok"]), plugins=[store]) as h:
            agent = await h.agents.create("m", options=OPTIONS)
            agent.session.meta["when"] = {"at": (1, 2)}
            result = await agent.prompt("hi")
    assert result.save_error is not None
    assert (
        f"DshError: session {agent.session.id!r}: its meta is not JSON (at meta.when.at: "
        "tuple values are not lossless JSON (got (1, 2)))" in result.save_error
    )
    assert result.save_error.endswith("; nothing was written")
    assert store.stored == {} and store.flushes == 0


@pytest.mark.parametrize(
    ("text", "kind"), [(42, "int"), (["x"], "list"), (b"x", "bytes"), (None, "NoneType")]
)
async def test_prompt_refuses_what_is_not_a_str_before_anything_is_logged(
    text: object, kind: str
) -> None:
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(["ok"])) as h:
            agent = await h.agents.create("p", options=OPTIONS)
            with pytest.raises(TypeError) as refused:
                await agent.prompt(text)  # type: ignore[arg-type]
            assert str(refused.value) == f"a prompt must be a str, not {kind}"
            assert list(agent.session.events) == [] and agent.status == "idle"
            assert (await agent.prompt("hi")).turn == 1  # still takes prompts


@pytest.mark.parametrize("call", ["prompt", "send", "steer"])
async def test_an_empty_prompt_is_refused_before_anything_is_logged(call: str) -> None:
    """``""`` started a turn with an empty user message, which some providers refuse
    (Anthropic: a text block must not be empty); ``dsh run ''`` is refused too."""
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel(["ok"])) as h:
            agent = await h.agents.create("p", options=OPTIONS)
            with pytest.raises(ValueError, match=r"^a prompt may not be empty") as refused:
                await _prompted(getattr(agent, call)(""))
            assert str(refused.value) == EMPTY
            assert list(agent.session.events) == [] and agent.status == "idle"
            assert (await agent.prompt(" ")).turn == 1  # only "" is refused


async def _prompted(result: object) -> None:
    if isinstance(result, Awaitable):
        await result


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "plugins",
            "abc",
            "plugins= takes a list of plugins (objects, or (name, plugin) pairs), not a "
            "str: plugins=[plugin]",
        ),
        (
            "select",
            "no:persistence",
            "select= takes a list of -p values, not a str: select=['no:persistence']",
        ),
    ],
)
def test_a_bare_str_for_plugins_or_select_is_refused(name: str, value: str, message: str) -> None:
    with pytest.raises(TypeError) as refused:
        Harness(load_entry_points=False, **{name: value})
    assert str(refused.value) == message
    with pytest.raises(TypeError) as refused:
        create_plugin_manager(load_entry_points=False, **{name: value})
    assert str(refused.value) == message
