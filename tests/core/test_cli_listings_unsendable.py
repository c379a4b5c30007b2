"""`dsh models` says a provider key that is set but cannot be sent (a line break in
it) is so, with the check `dsh run` refuses it by, rather than "(set)" (review
rev-cli, finding 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh.cli import main
from dsh.llm.choose import ENV_PROVIDERS

KEY = "sk-a\nb"  # pasted across lines
WHY = "its character 5 (of 6) is a line break"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "")
    monkeypatch.delenv("DSH_CONFIG", raising=False)
    for variable, _ in ENV_PROVIDERS:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return tmp_path


def test_a_key_dsh_run_cannot_send_is_said_so(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--cwd", str(workspace), "models"]) == 0
    out = capsys.readouterr().out
    assert f"OPENAI_API_KEY (set, cannot be sent: {WHY})" in out
    assert "OPENAI_API_KEY (set) " not in out
    assert f"its key cannot be sent ({WHY}): dsh run refuses it" in out
    assert KEY not in out
    # dsh run refuses it, by the same words
    assert main(["--cwd", str(workspace), "run", "hi"]) == 2
    assert WHY in capsys.readouterr().err


def test_json_says_why_beside_api_key_set(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--cwd", str(workspace), "models", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    row = rows["openai:gpt-4.1-mini"]
    assert (row["api_key_set"], row["api_key_unsendable"]) == (True, WHY)
    assert rows["local"]["api_key_unsendable"] is None
