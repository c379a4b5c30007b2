"""A plugin's settings given in code are validated with the harness in pydantic's
validation context (docs/hooks.md, register_settings), so a validator can check a name
against what is registered and make ``agents.create`` raise; the file's sections and
agents are validated without it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationInfo, field_validator

from dsh import DshError, hookimpl
from dsh.testing import ScriptedModel, scripted_harness

SEEN: list[object] = []


class UsesTool(BaseModel):
    tool: str = "read"

    @field_validator("tool")
    @classmethod
    def _registered(cls, name: str, info: ValidationInfo) -> str:
        SEEN.append(info.context)
        harness = (info.context or {}).get("harness")
        if harness is not None and harness.tools.get(name) is None:
            raise ValueError(f"no tool {name!r} is registered")
        return name


class Plugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(UsesTool)


async def test_code_options_see_the_harness_and_the_file_does_not() -> None:
    SEEN.clear()
    config = "uses:\n  tool: nosuch\nagents:\n  - id: filed\n    options: {uses: {tool: x}}\n"
    plugins = [("uses", Plugin())]
    async with scripted_harness(ScriptedModel([]), plugins=plugins, config_text=config) as h:
        assert SEEN and all(context is None for context in SEEN)  # the file's checks
        with pytest.raises(DshError) as refused:
            await h.agents.create("a", options={"model": "scripted", "uses": {"tool": "nosuch"}})
        assert str(refused.value) == "agent 'a': option uses.tool: no tool 'nosuch' is registered"
        assert SEEN[-1] == {"harness": h, "agent_id": "a"}
        await h.agents.create("b", options={"model": "scripted", "uses": {"tool": "read"}})
