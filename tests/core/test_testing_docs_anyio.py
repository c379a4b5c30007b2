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


def _setup(folder: Path, module: str) -> Path:
    (folder / "conftest.py").write_text('pytest_plugins = ["dsh.testing"]\n')
    if not (folder / "pytest.ini").exists():
        (folder / "pytest.ini").write_text("[pytest]\n")  # not this repository's settings
    (folder / "test_example.py").write_text(module)
    return folder


def _pytest(folder: Path, module: str) -> subprocess.CompletedProcess[str]:
    _setup(folder, module)
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


FIXTURE = """
import pytest
from dsh.testing import ScriptedModel, run_turn, scripted_harness

{mark}


@pytest.fixture
async def harness():
    async with scripted_harness(ScriptedModel(["ok"]), load_entry_points=False) as h:
        yield h


async def test_in_a_fixture(harness):
    agent = await harness.agents.create("a", options={{"model": "scripted"}})
    assert (await run_turn(agent, "hi"))[-1].data["reason"] == "completed"
"""


def test_a_harness_held_by_a_fixture_fails_under_pytest_asyncio_as_the_page_says(
    tmp_path: Path,
) -> None:
    """Was: the page did not say that a ``scripted_harness`` held by an async yield
    fixture, the first thing a pytest user writes, fails under pytest-asyncio (its setup
    and teardown run in different tasks) with an error naming neither dsh nor the fix."""
    doc = " ".join(DOC.read_text().split())
    said = re.search(r"teardown then fails with `RuntimeError: ([^`]+)`", doc)
    assert said is not None, "testing.md says how a harness in a fixture fails"
    assert "works under anyio's plugin only" in doc
    anyio_dir, asyncio_dir = tmp_path / "anyio", tmp_path / "asyncio"
    anyio_dir.mkdir()
    asyncio_dir.mkdir()
    works = _pytest(anyio_dir, FIXTURE.format(mark="pytestmark = pytest.mark.anyio"))
    assert works.returncode == 0, works.stdout + works.stderr
    (asyncio_dir / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n")
    fails = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "asyncio"],
        cwd=_setup(asyncio_dir, FIXTURE.format(mark="")),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert f"RuntimeError: {said[1]}" in fails.stdout, fails.stdout + fails.stderr
    assert fails.returncode == 1
