"""``Harness.add_secrets``: a secret no environment variable holds (one a plugin reads
from its settings) is hidden from then on, as a model API key is: in the tool results of
the harness's agents, those already running too, in log records and by ``dsh.redact``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh import hookimpl, redact
from dsh.errors import DshError
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="bash")

FIRST = "from-settings-5e0c7d21a9"
LATER = "added-later-83b1f4c6d0"


def results(events: list[Any]) -> list[str]:
    return [e.data["content"] for e in events if e.type == "tool/result"]


class FromSettings:
    """A plugin that learns a secret from its settings as the harness starts."""

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        harness.add_secrets([FIRST, "short"])


async def test_secrets_added_are_hidden_from_tool_results_of_running_agents(
    tmp_path: Path,
) -> None:
    (tmp_path / "leak.txt").write_text(f"{FIRST} {LATER} short\n")
    say = tool_calls(("bash", {"command": "cat leak.txt"}))
    model = ScriptedModel([say, text("ok"), say, text("ok")])
    async with scripted_harness(
        model, plugins=[FromSettings()], load_entry_points=False, workspace=tmp_path
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(10):
            first = await run_turn(agent, "go")
            harness.add_secrets([LATER])  # the agent has hidden secrets already
            later = await run_turn(agent, "again")
        assert redact(f"{FIRST}, {LATER}") == "***, ***"
    # under 8 characters: not hidden (it would garble text), as for a key
    assert results(first) == [f"*** {LATER} short\n[exit code 0]"]
    assert results(later) == ["*** *** short\n[exit code 0]"]


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ("a-single-secret", "add_secrets takes an iterable of str, not a str"),
        ([b"bytes-secret", 12345678], "each secret must be a str, not bytes, int"),
    ],
    ids=["str", "not-str"],
)
async def test_add_secrets_refuses_what_is_not_a_list_of_str(values: Any, said: str) -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError, match=said):
            harness.add_secrets(values)
        assert "a-single-secret" not in harness.secrets()
