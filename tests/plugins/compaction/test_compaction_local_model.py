"""``compaction.model: local``: the bundled local model is started by the dsh command
for an agent's model only, never for a plugin's setting (as options given in code are
checked, ``_code_options._unknown_model``). Named in dsh.yml without a ``models:``
entry of that name, it would fail the first compaction at run time, so the file is
refused at load, naming the file, the line and ``compaction.model``."""

from __future__ import annotations

import pytest
from compaction_util import harness

from dsh import ConfigError
from dsh.testing import ScriptedModel

pytestmark = pytest.mark.plugins("compaction")


async def test_local_as_the_summariser_is_refused_at_load_saying_why() -> None:
    text = "compaction:\n  threshold: 0.5\n  model: local\n"

    with pytest.raises(ConfigError) as info:
        async with harness(config_text=text):
            pass

    message = str(info.value)
    assert "<string>:3:3: compaction.model:" in message
    assert "'local'" in message
    assert "nothing starts it for a plugin's setting" in message
    assert "Omit the setting to use the agent's model" in message


async def test_a_models_entry_named_local_is_accepted() -> None:
    # served by a plugin (the scripted models): `models:` declares it
    text = "models:\n  local: {provider: scripted}\ncompaction:\n  model: local\n"
    local = ScriptedModel([], name="local")

    async with harness(local, config_text=text) as h:
        assert h.config.section("compaction").model == "local"


async def test_an_agents_model_local_is_still_accepted() -> None:
    # the dsh command starts the bundled server for the agent it talks to
    text = "model: local\ncompaction:\n  threshold: 0.5\n"

    async with harness(config_text=text) as h:
        assert h.config.default_model == "local"
