"""The files whose claims tests/docs_audit checks: what a user reads."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parents[2]
USER_DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted(ROOT.glob("plugins/*/README.md")),
    *sorted(ROOT.glob("examples/*/README.md")),
]
