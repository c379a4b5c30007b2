"""Two harnesses of one process whose configs choose the same store with settings of
their own (``fsync``, ``checkpoints``, ``checkpoint_delay``): they share the store (the
claims hold between them as between processes), and each writes its sessions with its
own settings, whichever started last.

Before: the harnesses shared one service per store, and a claim taken through it was
noted with the settings of the harness started last; a session whose writer was made
from its note (one live in no harness the plugin knows) was written with the other
harness's settings."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import pytest

from dsh.harness import Harness
from dsh.session import Session, SessionEvent
from dsh.testing import ErrorRecorder, ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import PersistencePlugin, SessionInUseError

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10
OPTIONS = {"model": "scripted"}
CAREFUL = "  fsync: always\n  checkpoints: false\n"  # A's
QUICK = "  fsync: flush\n  checkpoints: true\n  checkpoint_delay: 0.2\n"  # B's


@pytest.fixture(params=["jsonl", "sqlite"])
def sections(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """A's and B's ``persistence:`` sections: one store, two sets of settings."""
    where = f"persistence:\n  backend: {request.param}\n  directory: {tmp_path / 'store'}\n"
    return where + CAREFUL, where + QUICK


def harness(
    plugin: PersistencePlugin, errors: ErrorRecorder, section: str
) -> AbstractAsyncContextManager[Harness]:
    return scripted_harness(
        ScriptedModel([text("ok")] * 10),
        plugins=[("persistence", plugin), ("errors", errors)],
        load_entry_points=False,
        config_text=section,
    )


def written_with(plugin: PersistencePlugin, session: Session) -> tuple[str, bool, float]:
    settings = plugin._writers[id(session)].settings
    assert settings is not None
    return settings.fsync, settings.checkpoints, settings.checkpoint_delay


@pytest.mark.parametrize("a_first", [True, False], ids=["A started first", "B started first"])
async def test_each_harness_writes_a_shared_store_with_its_own_settings(
    sections: tuple[str, str], a_first: bool
) -> None:
    plugin, errors = PersistencePlugin(), ErrorRecorder()
    order = sections if a_first else sections[::-1]
    with anyio.fail_after(LIMIT):
        async with (
            harness(plugin, errors, order[0]) as first,
            harness(plugin, errors, order[1]) as second,
        ):
            a, b = (first, second) if a_first else (second, first)
            in_a = await a.agents.create("a", session_id="in-a", options=OPTIONS)
            in_b = await b.agents.create("b", session_id="in-b", options=OPTIONS)
            await run_turn(in_a, "hello from a")
            await run_turn(in_b, "hello from b")
            assert written_with(plugin, in_a.session) == ("always", False, 0.05)
            assert written_with(plugin, in_b.session) == ("flush", True, 0.2)
            with pytest.raises(SessionInUseError, match="'in-a' is in use"):
                await b.agents.create("b2", session_id="in-a", options=OPTIONS)
            listed = await (await b.relay.session_persistence(b)).list()  # type: ignore[union-attr]
            assert sorted(header.id for header in listed) == ["in-a", "in-b"]
            await in_a.dispose()
            await in_b.dispose()
    assert errors.errors == [] and errors.failures == []


async def test_a_claim_through_a_harness_service_is_written_with_its_settings(
    sections: tuple[str, str],
) -> None:
    """The note of a claim carries the settings of the harness whose service took it,
    not those of the harness started last: the writer of a session live in no harness
    (claimed through A's service here by hand) is made from that note."""
    plugin, errors = PersistencePlugin(), ErrorRecorder()
    with anyio.fail_after(LIMIT):
        async with harness(plugin, errors, sections[0]) as a, harness(plugin, errors, sections[1]):
            service = await a.relay.session_persistence(a)
            assert service is not None
            session = Session("by-hand")
            await service.claim(session.id, session.events)  # type: ignore[attr-defined]
            plugin.session_event(session, SessionEvent("user/message", 0, 1.0, {}))
            assert written_with(plugin, session) == ("always", False, 0.05)
            await service.release(session.id)  # type: ignore[attr-defined]
    assert errors.errors == [] and errors.failures == []
