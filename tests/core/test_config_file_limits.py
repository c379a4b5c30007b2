"""A config file is read only so far: past ``MAX_FILE_BYTES`` it is refused without
reading the rest (``-c /dev/zero`` took gigabytes), and a value nested deeper than
``MAX_DEPTH`` lists or mappings is refused at its line (330 levels were a
RecursionError's traceback) (core/src/dsh/_config_yaml.py read, check_size)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from config_support import SETTINGS, fails

from dsh._config_yaml import MAX_DEPTH, MAX_FILE_BYTES
from dsh.config import load_config
from dsh.errors import ConfigError

TOO_LARGE = "larger than 1 MiB, the most a config file may hold; is it the right file?"


def test_a_file_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dsh.yml"
    path.write_text("#" * MAX_FILE_BYTES + "\n")  # a comment: valid YAML
    err = fails(path)
    assert (err.source, err.path, err.reason) == (str(path), "", TOO_LARGE)


def test_a_file_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "dsh.yml"
    path.write_text("model: local\n" + "#" * (MAX_FILE_BYTES - 14) + "\n")
    assert load_config(path, settings=SETTINGS).default_model == "local"


def test_an_endless_pipe_is_not_read_to_its_end(tmp_path: Path) -> None:
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    written = [0]

    def write() -> None:  # 64 MiB of NUL, as /dev/zero gives, unless the reader stops
        with fifo.open("wb") as out:
            try:
                while written[0] < 64 * MAX_FILE_BYTES:
                    out.write(bytes(1 << 16))
                    written[0] += 1 << 16
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=write)
    writer.start()
    try:
        with pytest.raises(ConfigError) as info:
            load_config(fifo, settings=SETTINGS)
    finally:
        writer.join(timeout=60)
    assert info.value.reason == TOO_LARGE
    assert written[0] < 4 * MAX_FILE_BYTES


def nested(depth: int) -> str:
    return "x: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"  # x's mapping is one


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 330, 999])
def test_a_value_nested_too_deep_is_refused_at_its_line(depth: int) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(text="model: local\n" + nested(depth), settings=SETTINGS)
    assert str(info.value) == (
        f"<string>:2:{3 + MAX_DEPTH}: x[0][0][0]...: nested more than {MAX_DEPTH} "
        "lists or mappings deep; a config needs far fewer"
    )


def test_nesting_through_aliases_counts() -> None:
    half = MAX_DEPTH // 2 + 1
    text = f"a: &a {'[' * half}{']' * half}\nb: {'{k: ' * half}*a{'}' * half}\n"
    with pytest.raises(ConfigError, match=r"<string>:1:\d+: b\.k\.k\.k\.\.\.: nested more"):
        load_config(text=text, settings=SETTINGS)


def test_a_value_nested_to_the_limit_loads() -> None:
    config = load_config(text=nested(MAX_DEPTH), blocked={"x"}.__contains__)
    assert config.raw["x"] is not None
