"""``--json`` output (``dsh run --json``, ``dsh sessions list --json``, ``dsh sessions
show --json``) writes the characters the text output escapes ("Trojan Source": bidi
controls; tag characters, C1 controls, invisible ones) as JSON escapes (``\\u202e``), as
it writes the Unicode line ends: the JSON is valid and reads back to the same text, and
a terminal it is printed to shows nothing reordered or hidden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply

#: a bidi override, an isolate, tag characters (hidden text), a C1 CSI, a zero-width space
UNSEEN = "\u202e\u2066\U000e0041\U000e0042\x9b\u200b"
TEXT = f"if admin {UNSEEN}x"


def _raw(text: str) -> list[str]:
    return [c for c in UNSEEN if c in text]


def test_run_json_escapes_what_text_output_escapes(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply(TEXT)])
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", "--json", f"say {TEXT}", env=cli_env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _raw(done.stdout) == []
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert f"say {TEXT}" in json.dumps(events, ensure_ascii=False)  # the prompt, whole


@pytest.mark.plugins("persistence")
def test_sessions_json_escapes_what_text_output_escapes(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply(TEXT)])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", f"say {TEXT}", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = dsh("sessions", "list", "--json", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert _raw(listed.stdout) == []
    (row,) = json.loads(listed.stdout)
    assert row["title"].startswith(f"say {TEXT}"[:20])
    shown = dsh("sessions", "show", row["id"], "--json", env=env, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert _raw(shown.stdout) == []
    events = [json.loads(line) for line in shown.stdout.splitlines()]
    assert TEXT in json.dumps(events, ensure_ascii=False)
