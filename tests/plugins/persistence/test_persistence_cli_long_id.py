"""``dsh sessions delete`` and ``show`` of a very long id (100,000 characters) say
``no stored session '...'`` with the id cut to its start and its length, as other
messages quote an id: it was printed whole, 100 KB on one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from persistence_cli_support import run, store

from dsh_persistence import PersistenceSettings
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

LONG = "a" * 100_000
SAID = f"no stored session {'a' * 60!r}... (100,000 characters)"


@pytest.fixture
def stored(settings: PersistenceSettings, config: Path) -> Path:
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("hello", calls=())
    store(settings, "first", log)
    return config


def test_delete_of_a_long_id_quotes_it_cut(
    stored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(stored, "delete", LONG, "first") == 1
    captured = capsys.readouterr()
    assert captured.err == f"dsh: error: {SAID}\n"
    assert captured.out == "deleted first\n"


@pytest.mark.parametrize("action", ["show", "resume"])
def test_show_and_resume_of_a_long_id_quote_it_cut(
    stored: Path, capsys: pytest.CaptureFixture[str], action: str
) -> None:
    assert run(stored, action, LONG, *(["hello"] if action == "resume" else [])) == 2
    assert capsys.readouterr().err == f"dsh: error: {SAID} (`dsh sessions list` shows them)\n"
