"""``InMemoryPersistence`` reserves the sessions agents continue, as the real stores do
(found by a review of embedding dsh from Python): two harnesses sharing one instance
could resume one session at once, where dsh-persistence refuses the second
(``SessionInUseError``: another process or harness is continuing it)."""

from __future__ import annotations

import anyio
import pytest
from loop_support import LIMIT

from dsh.errors import SessionInUseError
from dsh.testing import InMemoryPersistence, ScriptedModel, scripted_harness, text

OPTIONS = {"model": "scripted"}


def in_use(session_id: str) -> str:
    return (
        f"session {session_id!r} is in use: another process or harness is continuing it "
        "(stored in memory); try again when it is done"
    )


async def test_a_session_continued_in_one_harness_is_refused_in_another_until_disposed() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel([text("one"), text("two"), text("three")])
    with anyio.fail_after(LIMIT):
        async with scripted_harness(model, plugins=[store], load_entry_points=False) as h1:
            first = await h1.agents.create("a", "s", options=OPTIONS)
            await first.prompt("hi")
            async with scripted_harness(model, plugins=[store], load_entry_points=False) as h2:
                with pytest.raises(SessionInUseError) as created:  # live in h1: new or not
                    await h2.agents.create("b", "s", options=OPTIONS)
                await first.dispose()
                resumed = await h1.agents.resume("a", "s")
                with pytest.raises(SessionInUseError) as refused:
                    await h2.agents.resume("b", "s")
                assert h2.agents.list() == []
                await resumed.dispose()  # lets the session go
                again = await h2.agents.resume("b", "s")
                assert (await again.prompt("more")).text == "two"
            # h2 has left, disposing its agent: the session is free again
            assert (await (await h1.agents.resume("a", "s")).prompt("last")).text == "three"
    assert str(created.value) == str(refused.value) == in_use("s")
    assert refused.value.code == "SESSION_IN_USE"


async def test_a_claim_is_held_until_released() -> None:
    # what the core calls: a start that fails once it holds the claim releases it
    store = InMemoryPersistence()
    await store.claim("s")
    with pytest.raises(SessionInUseError, match=r"^session 's' is in use"):
        await store.claim("s", [])
    await store.release("s")
    await store.claim("s")
    await store.release("s")
    await store.release("s")  # nothing held: nothing to let go
