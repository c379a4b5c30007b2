"""``dsh run`` with a provider key in its environment and a model server that fails
(a study of where the key can leak: the terminal, ``--json`` and the session store).
Each test follows one path; tests marked xfail show a leak that exists today (see
reason). The adapters' own paths are in tests/core/llm/test_secrets_study_errors.py."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply, tool_call_reply, wire

KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"  # sk-test- and 40 more


def gateway(tmp_path: Path, url: str, extra: str = "") -> None:
    """A dsh.yml whose model ``gw`` is provider ``openai`` at ``url`` (it sends
    $OPENAI_API_KEY), with one retry at most."""
    (tmp_path / "dsh.yml").write_text(
        f"model: gw\nmodels:\n  gw:\n    provider: openai\n    model: m\n"
        f"    base_url: {url}\n    max_retries: 1\n{extra}"
    )


def stored(sessions: Path) -> str:
    """Everything the persistence plugin wrote: JSONL files and SQLite databases."""
    text = [path.read_text() for path in sessions.rglob("*.jsonl")]
    for path in sessions.rglob("*.sqlite3"):
        with closing(sqlite3.connect(path)) as db:
            text += db.iterdump()
    return "\n".join(text)


@pytest.mark.plugins("persistence")
def test_a_key_with_a_carriage_return_is_sent_without_it(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """OPENAI_API_KEY ending in \\r (exported from a CRLF .env file): the HTTP client
    refused the header and quoted it whole, so the key reached stderr, ``--json`` and the
    session file in a TRANSPORT error. The key is sent without it, and the turn runs."""
    server = model_server([text_reply("fine")])
    gateway(tmp_path, server.url)
    env = {**cli_env, "OPENAI_API_KEY": KEY + "\r", "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("run", "--json", "go", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert server.server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    session = stored(Path(cli_env["DSH_PERSISTENCE_DIR"]))
    assert '"fine"' in session
    assert KEY not in done.stdout + done.stderr + session


@pytest.mark.plugins("persistence")
def test_a_401_echoing_the_key_shows_it_hidden_in_json_and_the_sqlite_store(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Path: a 401 whose message quotes the whole key (some servers do) -> the turn's
    error in ``--json`` stdout, stderr and the SQLite store, each with ``***``."""
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "auth"}}
    server = model_server([wire.error(401, echo)])
    gateway(tmp_path, server.url, "persistence:\n  backend: sqlite\n")
    env = {**cli_env, "OPENAI_API_KEY": KEY, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("run", "--json", "go", env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert server.server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    session = stored(Path(cli_env["DSH_PERSISTENCE_DIR"]))
    for text in (done.stdout, session):
        assert "Incorrect API key provided: ***" in text
    assert KEY not in done.stdout + done.stderr + session


@pytest.mark.xfail(
    strict=True,
    reason="tool results are cleared of the key's literal text only (redact, "
    "core/src/dsh/_steps.py, StepRunner._step); a command that reads dsh's own environment "
    "(/proc/$PPID/environ stays readable by its children) and prints the key transformed "
    "(rev, base64, tr) puts it into the output, the session file and the next request",
)
@pytest.mark.plugins("persistence")
def test_a_key_read_from_dshs_environment_and_reversed_stays_out_of_the_session(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Leak path: a model (a prompt injection, say) runs a command that prints dsh's
    own key reversed -> the tool result in --json stdout and the session file."""
    command = "tr '\\0' '\\n' < /proc/$PPID/environ | grep -a ^OPENAI_API_KEY= | rev"
    server = model_server([tool_call_reply("bash", {"command": command}), text_reply("ok")])
    env = {**cli_env, "OPENAI_API_KEY": KEY, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh(
        "-m", f"openai-compatible:tiny@{server.url}", "run", "--json", "go", env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "=YEK_IPA_IANEPO" in done.stdout  # the command read the variable
    session = stored(Path(cli_env["DSH_PERSISTENCE_DIR"]))
    assert KEY[::-1] not in done.stdout + session
