"""``CommandContext.read_prompt`` (core/src/dsh/commands.py, _cli_prompt.py) for a
plugin's command: a coroutine; text piped in with no ``-`` to take it is left whole
for the command; its hints name the command that reads, or give the command line it was given (the
words before the prompt's: ``dsh sessions resume ID``); a str is refused."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest

from dsh.commands import CommandContext
from dsh.plugins import create_plugin_manager


def _context(tmp_path: Path) -> CommandContext:
    pm = create_plugin_manager(load_entry_points=False)
    return CommandContext(argparse.Namespace(), pm, None, tmp_path)


@pytest.fixture
def piped(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bytes], None]]:
    """Puts its bytes on stdin through a pipe (written whole, its end closed)."""
    opened: list[TextIO] = []

    def pipe(data: bytes) -> None:
        read_end, write_end = os.pipe()
        os.write(write_end, data)
        os.close(write_end)
        opened.append(open(read_end, encoding="utf-8"))  # noqa: SIM115
        monkeypatch.setattr(sys, "stdin", opened[-1])

    yield pipe
    for stream in opened:
        stream.close()


def test_text_piped_in_with_no_dash_is_left_whole_for_the_command(
    tmp_path: Path, piped: Callable[[bytes], None], capsys: Any
) -> None:
    """Whether something was piped is seen without reading any of it (a byte was read)."""
    piped(b"all of it\n")
    context = _context(tmp_path)

    prompt = anyio.run(context.read_prompt, ["summarise"], "mycmd")

    assert prompt == "summarise"
    assert sys.stdin.buffer.read() == b"all of it\n"
    said = capsys.readouterr().err
    assert "dsh: the text piped in is not sent" in said
    assert "(... | dsh mycmd summarise this -)" in said  # not dsh run's


def test_a_dash_reads_what_is_piped(tmp_path: Path, piped: Callable[[bytes], None]) -> None:
    piped(b"\xef\xbb\xbfthe text\r\n")
    prompt = anyio.run(_context(tmp_path).read_prompt, ["look at", "-"], "mycmd")
    assert prompt == "look at\n\nthe text"


def test_the_hint_for_an_empty_prompt_names_the_command(tmp_path: Path) -> None:
    from dsh.errors import DshError

    with pytest.raises(DshError) as raised:
        anyio.run(_context(tmp_path).read_prompt, [" "], "mycmd")
    assert 'give the text to send (dsh mycmd "list the files")' in str(raised.value)


def test_the_hints_take_the_command_line_the_command_gives(
    tmp_path: Path, piped: Callable[[bytes], None], capsys: Any
) -> None:
    """``dsh mycmd "list the files"`` is wrong for a command whose prompt follows other
    words: ``dsh sessions resume "list the files"`` pasted takes the text for the id."""
    from dsh.errors import DshError

    line = "dsh sessions resume 'an id'"
    with pytest.raises(DshError) as raised:
        anyio.run(partial(_context(tmp_path).read_prompt, [" "], "mycmd", command_line=line))
    said = str(raised.value)
    assert said.startswith("mycmd: the prompt is empty; give the text to send ")
    assert said.endswith(f'({line} "list the files")')
    piped(b"all of it\n")
    read = partial(_context(tmp_path).read_prompt, ["summarise"], "mycmd", command_line=line)
    assert anyio.run(read) == "summarise"
    assert f"(... | {line} summarise this -)" in capsys.readouterr().err


def test_a_str_for_the_words_is_refused(tmp_path: Path) -> None:
    """Not split into its characters (each a word)."""
    with pytest.raises(TypeError, match="read_prompt: words must be a list"):
        anyio.run(_context(tmp_path).read_prompt, "hello", "mycmd")
