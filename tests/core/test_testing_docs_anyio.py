"""docs/testing.md says dsh.testing works with anyio's pytest plugin; without
pytest-asyncio its first example failed ("async def functions are not natively
supported") unless the module is marked for anyio: the page now gives the line, and
the example, with that line and pytest-asyncio left out, passes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).parents[2] / "docs" / "testing.md"


def _pytest(folder: Path, module: str) -> subprocess.CompletedProcess[str]:
    (folder / "conftest.py").write_text('pytest_plugins = ["dsh.testing"]\n')
    (folder / "pytest.ini").write_text("[pytest]\n")  # not this repository's settings
    (folder / "test_example.py").write_text(module)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:asyncio", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_first_example_passes_under_anyio_with_the_line_the_page_gives(
    tmp_path: Path,
) -> None:
    doc = DOC.read_text()
    said = re.search(r"put `(pytestmark = [^`]+)` \(after\s+`(import pytest)`\)", doc)
    assert said is not None, "testing.md gives the line anyio's plugin needs"
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    example = next(b for b in blocks if "async def test_tagger_reaches_the_model" in b)
    marked = _pytest(tmp_path, f"{said[2]}\n\n{said[1]}\n\n{example}")
    assert marked.returncode == 0, marked.stdout + marked.stderr
    unmarked = _pytest(tmp_path, example)  # what the line is for
    assert "async def functions are not natively supported" in unmarked.stdout
    assert unmarked.returncode == 1
