"""``Harness(starts_agents=False)``, the harness of ``dsh models`` and ``dsh tools``:
what it holds is there (config, models, tools), the config's agents are not started,
settings for a plugin that does not run are a warning instead of an error, and creating
or resuming an agent is refused (nothing may run on a config read leniently)."""

from __future__ import annotations

import pytest

from dsh import ConfigError, DshError
from dsh.harness import Harness

CONFIG = """
models:
  box: {provider: openai-compatible, model: qwen, base_url: "http://127.0.0.1:9/v1"}
agents:
  - id: helper
    model: box
shell:
  x: 1
"""


async def test_a_harness_that_starts_no_agent_warns_and_refuses_agents(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.raises(ConfigError, match="section 'shell' is for a plugin"):
        async with Harness(config_text=CONFIG, load_entry_points=False):
            pass
    async with Harness(config_text=CONFIG, load_entry_points=False, starts_agents=False) as h:
        assert [a.id for a in h.config.agents] == ["helper"]
        assert h.agents.list() == []
        assert "box" in h.models
        with pytest.raises(DshError, match="'main': this harness starts no agent"):
            await h.agents.create("main", options={"model": "box"})
        assert h.agents.list() == []
    (warning,) = [r.getMessage() for r in caplog.records if "shell" in r.getMessage()]
    assert warning.endswith("(ignored here: this command starts no agent; dsh run refuses it)")
