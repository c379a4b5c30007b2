"""A ``SecretStr`` settings value too short to hide (under 8 characters) is said, with
its place in dsh.yml: the docs promise "every such value" hidden, and a 7-character
token showed in tool results, logs and session files without a word."""

from __future__ import annotations

import logging

import pytest
from secrets_support import DeclaresToken

from dsh.harness import Harness

MODELS = "models:\n  m:\n    provider: openai-compatible\n    base_url: http://127.0.0.1:9/v1\n"


async def warnings_for(text: str, caplog: pytest.LogCaptureFixture) -> list[str]:
    caplog.set_level(logging.WARNING)
    async with Harness(
        plugins=[("tok", DeclaresToken())], load_entry_points=False, config_text=text
    ):
        pass
    return [r.getMessage() for r in caplog.records if "SecretStr" in r.getMessage()]


async def test_a_short_secret_in_a_section_is_said_with_its_place(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert await warnings_for(f"{MODELS}tok: {{token: abc1234}}\n", caplog) == [
        "<string>:5:1: tok holds a secret (a SecretStr field) of fewer than 8 characters, "
        "which dsh does not hide in tool results, logs or session files: so short a value "
        "cannot be told from other text"
    ]


async def test_a_short_secret_in_an_agent_s_options_is_said_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = f"{MODELS}agents:\n  - id: main\n    model: m\n    options: {{tok: {{token: abc}}}}\n"
    (said,) = await warnings_for(text, caplog)
    assert said.startswith("<string>:8:")
    assert "agents[0].options.tok holds a secret (a SecretStr field) of fewer than 8" in said


@pytest.mark.parametrize("token", ["", "abcd1234"])
async def test_an_empty_or_long_enough_secret_is_not(
    caplog: pytest.LogCaptureFixture, token: str
) -> None:
    assert await warnings_for(f"{MODELS}tok: {{token: '{token}'}}\n", caplog) == []
