"""A session an older dsh stored with a secret in its meta (a token nested in a free
option, a meta value under a secret's name, a key dsh holds) is resumed with its meta
in memory (``session.meta``, what plugins read) hidden as a new session's is stored:
``***`` in each place. The stored session is left as it is.

Before: a resume given ``options=`` (which replace the stored ones) held the old
meta's token in the clear in ``session.meta``."""

from __future__ import annotations

import pytest

from dsh.persistence import StoredSession
from dsh.testing import InMemoryPersistence, ScriptedModel, scripted_harness

TOKEN = "tok-Qw3rTy7uI9oP1aS2dF4gH6jK8"
HELD = "sk-HELD0123456789abcdefghijkl"


@pytest.mark.parametrize("via", ["resume", "resume_stored"])
async def test_a_resumed_sessions_meta_is_held_hidden(via: str) -> None:
    store = InMemoryPersistence()
    plugins = [("persistence", store)]
    harnessed = scripted_harness(ScriptedModel([]), plugins=plugins, load_entry_points=False)
    async with harnessed as harness:
        harness.add_secrets([HELD])
        agent = await harness.agents.create("a", options={"model": "scripted"})
        sid = agent.session.id
        await agent.dispose()
        old = store.stored[sid]
        options = {"model": "scripted", "gw": {"hosts": [{"token": TOKEN}]}, "n": HELD}
        meta = {**old.meta, "options": options, "gw_token": [TOKEN]}
        store.stored[sid] = StoredSession(old.id, old.created, old.events, meta)
        if via == "resume":
            again = await harness.agents.resume("b", sid, options={"model": "scripted"})
        else:
            stored = store.stored[sid]
            again = await harness.agents.resume_stored("b", stored, {"model": "scripted"})
        held = again.session.meta
        await again.dispose()
    assert held["options"] == {"model": "scripted", "gw": {"hosts": [{"token": "***"}]}, "n": "***"}
    assert held["gw_token"] == "***"
    assert store.stored[sid].meta == meta  # the stored session as it was
