"""``CommandContext.config``: a config a command loaded already is the one its harness
takes; the file is not read again (a pipe, as ``dsh -c <(...)``, reads nothing the
second time)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dsh.commands import CommandContext
from dsh.config import load_config
from dsh.plugins import create_plugin_manager


async def test_a_loaded_config_is_the_harness_config(tmp_path: Path) -> None:
    config = load_config(text="models:\n  fast: {provider: openai, model: gpt-x}\n")
    path = tmp_path / "read-already.yml"  # gone: reading it again would fail
    pm = create_plugin_manager(load_entry_points=False)
    context = CommandContext(argparse.Namespace(), pm, path, tmp_path, config)

    async with context.harness(starts_agents=False) as harness:
        assert harness.config is config
        assert "fast" in harness.models.names()
