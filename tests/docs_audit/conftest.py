"""The docs audit: tests that pin what docs/*.md says. The command-line helpers come
from tests/cli/cli_support.py (and the compaction helpers from
tests/plugins/compaction/compaction_util.py), which are put on the path here as tests/cli's own
conftest does (those conftests are not loaded when only this directory is run)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
sys.path.insert(0, str(Path(__file__).parents[1] / "plugins" / "compaction"))

from cli_support import cli_env, model_server

__all__ = ["cli_env", "model_server"]
