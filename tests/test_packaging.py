"""What every distribution of the repository ships besides its code: the license it
declares, as a file (hatchling puts ``LICENSE`` into the wheel and the sdist)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTIONS = sorted(
    path.parent
    for pattern in ("core/pyproject.toml", "plugins/*/pyproject.toml", "examples/*/pyproject.toml")
    for path in ROOT.glob(pattern)
)


def test_every_distribution_is_found() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in DISTRIBUTIONS}
    plugins = {f"plugins/{name}" for name in ("compaction", "permissions", "persistence")}
    assert {"core", *plugins, "examples/dsh-shout"} <= names


@pytest.mark.parametrize("directory", DISTRIBUTIONS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_distribution_ships_the_license_it_declares(directory: Path) -> None:
    project = tomllib.loads((directory / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    text = (directory / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert text == (ROOT / "LICENSE").read_text()
