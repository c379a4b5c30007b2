"""``/compact`` in a chat fed by a script: what counts as a failed command for the exit
status (docs/cli.md): a compaction that failed; not one that found nothing to compact,
though its result carries an error (NOTHING)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import dsh_compaction
from dsh import _cli_chat
from dsh_compaction import CompactionResult

pytestmark = pytest.mark.plugins("compaction")
ERROR = {"code": "UNAVAILABLE", "message": "the summary model is down"}
NOTHING = {"code": "NOTHING", "message": "nothing to compact"}  # what a manual skip says


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        (CompactionResult("failed", "manual", 900, 900, error=ERROR), True),
        (CompactionResult("pruned", "manual", 900, 400), False),
        (CompactionResult("summarized", "manual", 900, 100), False),
        (CompactionResult("skipped", "manual", 90, 90), False),
        (CompactionResult("skipped", "manual", 90, 90, error=NOTHING), False),
    ],
    ids=["failed", "pruned", "summarized", "skipped", "nothing-to-compact"],
)
async def test_only_a_compact_that_failed_is_a_failed_command(
    monkeypatch: pytest.MonkeyPatch, result: CompactionResult, failed: bool
) -> None:
    async def compact_now(agent: Any) -> CompactionResult:
        return result

    async def then() -> None:
        pass

    monkeypatch.setattr(dsh_compaction, "compact_now", compact_now)
    harness: Any = SimpleNamespace(pm=SimpleNamespace(has_plugin=lambda name: True))
    failures: list[str] = []
    stops: list[str] = []
    await _cli_chat._compact(harness, object(), then, [], failures, stops.append)
    assert failures == ([f"  /compact: {result}"] if failed else [])
    assert stops == []  # nothing stopped it
