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


def test_a_library_reads_a_fifo_each_time(fifo: Path) -> None:
    for name in ("first", "second"):
        writer = _feed(fifo, _entry(name))
        assert name in load_config(fifo).models
        writer.join(5)
        assert not writer.is_alive()


def test_a_dsh_command_reads_a_fifo_once(fifo: Path) -> None:
    with _pipes.kept():
        writer = _feed(fifo, _entry("first"))
        assert "first" in load_config(fifo).models
        writer.join(5)
        assert "first" in load_config(fifo).models  # no second open: it would wait
    assert _pipes.TEXTS is None


def test_after_a_dsh_command_a_library_reads_each_time(fifo: Path, tmp_path: Path) -> None:
    """Was: main() left keeping on, so a program reading the same path later got the
    command's text, even once the path was a regular file again."""
    from dsh.cli import main

    writer = _feed(fifo, _entry("first"))
    assert main(["-c", str(fifo), "config", "check"]) in (0, 1)
    writer.join(5)
    fifo.unlink()
    fifo.write_text(_entry("second"))
    assert "second" in load_config(fifo).models
