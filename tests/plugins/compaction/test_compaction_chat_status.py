"""``/compact``, the chat command dsh-compaction registers (``register_chat_commands``):
what counts as a failed command for a script's exit status (docs/cli.md): a compaction
that failed; not one that found nothing to compact, though its result carries an error
(NOTHING)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import dsh_compaction
from dsh._cli_chat_commands import run_command
from dsh.commands import ChatCommand
from dsh_compaction import CompactionResult

pytestmark = pytest.mark.plugins("compaction")
ERROR = {"code": "UNAVAILABLE", "message": "the summary model is down"}
NOTHING = {"code": "NOTHING", "message": "nothing to compact"}  # what a manual skip says


def compact_command() -> ChatCommand:
    found: list[ChatCommand] = []
    dsh_compaction.register_chat_commands(found.append)
    [command] = found
    return command


def test_the_plugin_registers_compact_with_its_help_and_stop_note() -> None:
    command = compact_command()
    assert (command.name, command.help, command.usage) == (
        "compact",
        "compact the history now",
        "",
    )
    assert command.stopped == "stopped; the history is as it was"


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
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    result: CompactionResult,
    failed: bool,
) -> None:
    agent = object()

    async def compact_now(given: Any) -> CompactionResult:
        assert given is agent  # the chat's agent
        return result

    monkeypatch.setattr(dsh_compaction, "compact_now", compact_now)
    context: Any = SimpleNamespace(agent=agent, text="", harness=None)
    failures: list[str] = []
    stops: list[str] = []
    await run_command("compaction", compact_command(), context, [], failures.append, stops.append)
    assert failures == ([f"  /compact: {result}"] if failed else [])
    assert capsys.readouterr().err == ("" if failed else f"  /compact: {result}\n")
    assert stops == []  # nothing stopped it
