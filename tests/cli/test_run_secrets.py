"""``dsh run`` with a provider key in its environment: a command the model runs reads
the environment of dsh itself (``/proc/$PPID/environ``, which no scrubbing of bash's
own environment can hide), and the key still reaches neither the output, the session
file nor the model (found by the CI operator study)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply, tool_call_reply

KEY = "sk-test-SECRET-0123456789"


@pytest.mark.plugins("persistence")
def test_a_key_read_from_dshs_own_environment_is_hidden_everywhere(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    command = "tr '\\0' '\\n' < /proc/$PPID/environ | grep -a OPENAI_API_KEY"
    server = model_server([tool_call_reply("bash", {"command": command}), text_reply("ok")])
    env = {**cli_env, "OPENAI_API_KEY": KEY, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh(
        "-m",
        f"openai-compatible:tiny@{server.url}",
        "run",
        "--json",
        "go",
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert '"content": "OPENAI_API_KEY=***' in done.stdout.replace('":"', '": "')
    assert KEY not in done.stdout + done.stderr
    assert KEY not in str(server.bodies())
    stored = list(Path(cli_env["DSH_PERSISTENCE_DIR"]).rglob("*.jsonl"))
    assert stored and all(KEY not in path.read_text() for path in stored)


PG_PASSWORD = "pg-test-SECRET-4d1e9a7c"
URL_PASSWORD = "url-test-SECRET-b83f05e2"
PG_URL = f"postgresql://dsh:{URL_PASSWORD}@127.0.0.1:9/dsh?sslmode=disable"


@pytest.mark.plugins("persistence")
def test_dsh_persistence_keeps_the_postgres_password_from_commands(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """dsh-persistence declares ``PGPASSWORD`` and ``$DSH_PERSISTENCE_URL``
    (``register_secrets``): a command sees neither in its environment, and what it reads
    of dsh's own hides the password, and only the password of the URL."""
    both = "grep -a -e '^PGPASSWORD=' -e '^DSH_PERSISTENCE_URL='"
    command = f"env | {both}; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ | {both} | sort"
    server = model_server([tool_call_reply("bash", {"command": command}), text_reply("ok")])
    env = {
        **cli_env,
        "PGPASSWORD": PG_PASSWORD,
        "DSH_PERSISTENCE_URL": PG_URL,
        "DSH_LOAD_PLUGINS": "persistence",
    }
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", "--json", "go", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [result] = [
        e["data"] for e in map(json.loads, done.stdout.splitlines()) if e["type"] == "tool/result"
    ]
    # nothing before ---: the command's environment holds neither variable
    assert result["content"] == (
        "---\nDSH_PERSISTENCE_URL=postgresql://dsh:***@127.0.0.1:9/dsh?sslmode=disable\n"
        "PGPASSWORD=***\n[exit code 0]"
    )
    for password in (PG_PASSWORD, URL_PASSWORD):
        assert password not in done.stdout + done.stderr
        assert password not in str(server.bodies())
    stored = list(Path(cli_env["DSH_PERSISTENCE_DIR"]).rglob("*.jsonl"))
    assert stored
    assert all("PGPASSWORD=***" in path.read_text() for path in stored)
    for password in (PG_PASSWORD, URL_PASSWORD):
        assert all(password not in path.read_text() for path in stored)


YML_PASSWORD = "yml-test-SECRET-7c2a91d4"


@pytest.mark.plugins("persistence")
def test_the_password_of_persistence_url_in_dsh_yml_is_hidden_from_what_commands_read(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A password written into ``persistence.url`` in dsh.yml (which a command can read)
    is hidden as one in ``$DSH_PERSISTENCE_URL`` is, whichever backend is chosen: the
    file a command prints shows ``***`` in the tool result, the session file and what
    the model is sent; the rest of the URL is shown."""
    url = f"postgresql://dsh:{YML_PASSWORD}@127.0.0.1:9/dsh?sslmode=disable"
    (tmp_path / "dsh.yml").write_text(f"persistence:\n  url: '{url}'\n")
    server = model_server([tool_call_reply("bash", {"command": "cat dsh.yml"}), text_reply("ok")])
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    model = f"openai-compatible:tiny@{server.url}"
    done = dsh("-m", model, "run", "--json", "go", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [result] = [
        e["data"] for e in map(json.loads, done.stdout.splitlines()) if e["type"] == "tool/result"
    ]
    shown = url.replace(YML_PASSWORD, "***")
    assert result["content"] == f"persistence:\n  url: '{shown}'\n[exit code 0]"
    assert YML_PASSWORD not in done.stdout + done.stderr
    assert YML_PASSWORD not in str(server.bodies())
    stored = list(Path(cli_env["DSH_PERSISTENCE_DIR"]).rglob("*.jsonl"))
    assert stored and all(YML_PASSWORD not in path.read_text() for path in stored)


QUERY_KEY = "qs-test-SECRET-7c1d0e9f4a"


@pytest.mark.plugins("persistence")
def test_a_key_in_the_query_of_a_m_url_is_hidden_from_tool_results_and_sessions(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    # the harness's secrets knew only the base_url of models: entries: a command
    # printing dsh's own command line showed a -m URL's ?api-key= whole
    command = "tr '\\0' ' ' < /proc/$PPID/cmdline"
    server = model_server([tool_call_reply("bash", {"command": command}), text_reply("ok")])
    model = f"openai-compatible:tiny@{server.url}?api-key={QUERY_KEY}"
    env = {**cli_env, "DSH_LOAD_PLUGINS": "persistence"}
    done = dsh("-m", model, "run", "--json", "go", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [result] = [
        e["data"] for e in map(json.loads, done.stdout.splitlines()) if e["type"] == "tool/result"
    ]
    assert "?api-key=*** run --json go" in result["content"]
    assert QUERY_KEY not in done.stdout + done.stderr
    assert QUERY_KEY not in json.dumps(server.bodies())
    stored = list(Path(cli_env["DSH_PERSISTENCE_DIR"]).rglob("*.jsonl"))
    assert stored and all(QUERY_KEY not in path.read_text() for path in stored)


@pytest.mark.plugins("persistence")
def test_a_key_typed_into_the_prompt_is_stored_and_sent_hidden(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """``dsh run "... Bearer $OPENAI_API_KEY ..."``: the session file, its title in
    ``dsh sessions list`` and the request say ``***``; stderr says why, naming no key."""
    server = model_server([text_reply("ok")])
    env = {**cli_env, "OPENAI_API_KEY": KEY, "DSH_LOAD_PLUGINS": "persistence"}
    model = f"openai-compatible:tiny@{server.url}"
    prompt = f'why does curl -H "Authorization: Bearer {KEY}" fail?'
    done = dsh("-m", model, "run", prompt, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the prompt held a secret dsh holds" in done.stderr
    listed = dsh("sessions", "list", env=env, cwd=tmp_path)
    assert 'why does curl -H "Authorization: Bearer ***" fail?' in listed.stdout
    assert KEY not in done.stdout + done.stderr + listed.stdout + str(server.bodies())
    stored = list(Path(cli_env["DSH_PERSISTENCE_DIR"]).rglob("*.jsonl"))
    assert stored and all(KEY not in path.read_text() for path in stored)
