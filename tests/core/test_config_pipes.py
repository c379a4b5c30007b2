"""A config read from a FIFO: a program using dsh as a library reads it each time (what
a second writer feeds is what it gets); within a ``dsh`` command it is read once
(``dsh._pipes``), which tests/cli/test_config_pipe.py checks through the CLI."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh import _pipes
from dsh.config import load_config


def _feed(fifo: Path, text: str) -> threading.Thread:
    writer = threading.Thread(target=fifo.write_text, args=(text,), daemon=True)
    writer.start()
    return writer


def _entry(name: str) -> str:
    return f"models:\n  {name}: {{provider: openai, model: gpt-4o}}\n"


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "dsh.yml"
    os.mkfifo(path)
    yield path
    os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))  # let a writer left waiting go


@pytest.fixture
def kept() -> Iterator[None]:
    before = _pipes.TEXTS
    _pipes.keep()
    yield
    _pipes.TEXTS = before


@pytest.fixture
def library() -> Iterator[None]:
    """As in a program using dsh (an in-process ``main()`` of another test, in the same
    worker, turned keeping on)."""
    before, _pipes.TEXTS = _pipes.TEXTS, None
    yield
    _pipes.TEXTS = before


@pytest.mark.usefixtures("library")
def test_a_library_reads_a_fifo_each_time(fifo: Path) -> None:
    for name in ("first", "second"):
        writer = _feed(fifo, _entry(name))
        assert name in load_config(fifo).models
        writer.join(5)
        assert not writer.is_alive()


@pytest.mark.usefixtures("kept")
def test_a_dsh_command_reads_a_fifo_once(fifo: Path) -> None:
    writer = _feed(fifo, _entry("first"))
    assert "first" in load_config(fifo).models
    writer.join(5)
    assert "first" in load_config(fifo).models  # no second open: it would wait
