"""docs/models.md, "A model of a plugin's own": the example's code runs as written, as
the plugin of a harness whose dsh.yml declares its model with a context_window."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

from dsh.messages import AssistantMessage
from dsh.testing import run_turn, scripted_harness

MODELS_MD = Path(__file__).parents[2] / "docs" / "models.md"


def models_md_block(marker: str) -> str:
    """The ```python block of models.md that holds ``marker``."""
    blocks = re.findall(r"```python\n(.*?)```", MODELS_MD.read_text(), re.DOTALL)
    (block,) = [b for b in blocks if marker in b]
    return block


def _plugin() -> types.ModuleType:
    module = types.ModuleType("models_md_reader")
    sys.modules[module.__name__] = module  # as an imported module is, while it runs
    try:
        exec(compile(models_md_block("class ReaderModel"), str(MODELS_MD), "exec"), vars(module))
    finally:
        del sys.modules[module.__name__]
    return module


async def test_the_example_model_calls_a_tool_then_answers(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    config = "models:\n  reader: {provider: reader, context_window: 16000}\n"
    async with scripted_harness(
        plugins=[("reader", _plugin())],
        load_entry_points=False,
        config_text=config,
        workspace=tmp_path,
    ) as harness:
        assert harness.models.get("reader", agent="a").info.context_window == 16000
        agent = await harness.agents.create("a", options={"model": "reader"})
        events = await run_turn(agent, "notes.txt")
    kinds = [e.type for e in events]
    assert "tool/call" in kinds and "tool/result" in kinds, kinds
    answers = [e.data["message"] for e in events if e.type == "assistant/message"]
    last = AssistantMessage.model_validate(answers[-1])
    assert last.text.startswith("read returned "), last
    assert last.stop_reason == "stop" and last.usage.output_tokens == 8
