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


BROKEN_MODEL = """
models:
  first: {provider: nosuchprov, model: x}
  box: {provider: openai-compatible, model: qwen, base_url: "http://127.0.0.1:9/v1"}
  last: {provider: openai-compatible, model: qwen}
"""


async def test_a_harness_that_starts_no_agent_warns_about_models_it_cannot_build(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An entry of ``models:`` that cannot be built (a provider nobody serves, as when
    the plugin serving it is left out) is an error where agents start, and a warning
    where none does (``dsh sessions list``): the entries that build are registered."""
    with pytest.raises(ConfigError, match=r"models\.first\.provider: unknown provider"):
        async with Harness(config_text=BROKEN_MODEL, load_entry_points=False):
            pass
    caplog.clear()
    async with Harness(config_text=BROKEN_MODEL, load_entry_points=False, starts_agents=False) as h:
        assert "box" in h.models
        assert "first" not in h.models and "last" not in h.models
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert [w.split(": ")[1] for w in warnings] == ["models.first.provider", "models.last.base_url"]
    assert all(w.startswith("<string>:") for w in warnings)
    assert all(
        w.endswith("(ignored here: this command starts no agent; dsh run refuses it)")
        for w in warnings
    )
