"""An agent's options are stored in its session's header, so an option named as a
secret is refused (``dsh._secret_names``): ``Authorization: Bearer ...`` (an HTTP
header's name, given as an option), ``Cookie`` and the like were not secrets' names,
and were stored as they were given in the session file."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh import DshError
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import PersistencePlugin, PersistenceSettings

pytestmark = pytest.mark.plugins("persistence")

TOKEN = "abcdefghijklmnopqrstuvwxyz0123456789"


def stored_text(directory: Path) -> str:
    return "".join(path.read_text() for path in directory.glob("*.jsonl"))


@pytest.mark.parametrize(
    "name",
    ["Authorization", "proxy-authorization", "X-Authentication", "Cookie", "cookies",
     "x-api-key", "private_key", "credentials", "Bearer"],
)  # fmt: skip
async def test_an_option_named_as_a_header_secret_is_refused_and_not_stored(
    name: str, tmp_path: Path
) -> None:
    plugin = PersistencePlugin(PersistenceSettings(backend="jsonl", directory=tmp_path))
    model = ScriptedModel([text("ok")])
    async with scripted_harness(
        model, plugins=[("persistence", plugin)], load_entry_points=False
    ) as harness:
        with pytest.raises(DshError) as caught:
            await harness.agents.create("a", options={"model": "scripted", name: f"Bearer {TOKEN}"})
        assert f"option {name!r}" in str(caught.value) and "names a secret" in str(caught.value)
        assert TOKEN not in str(caught.value)
        agent = await harness.agents.create("b", options={"model": "scripted"})
        await run_turn(agent, "hi")
    stored = stored_text(tmp_path)
    assert '"hi"' in stored and TOKEN not in stored
