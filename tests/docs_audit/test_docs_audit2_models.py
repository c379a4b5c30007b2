"""docs/models.md on the retry warning `dsh run` prints and the `-m` shorthand, checked
with a real `dsh` process against the loopback model server of tests/cli."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, text_reply, wire

from dsh.llm.providers import parse_model_shorthand


def test_dsh_run_prints_each_retry_as_the_page_shows(
    cli_env: dict[str, str], model_server: Any, tmp_path: Path
) -> None:
    """models.md:279-281: "Each retry is logged as a warning (logger `dsh.llm._http`; `dsh
    run` prints it: `dsh: model 'fast': HTTP 503 from the server at http://127.0.0.1:8080:
    overloaded (SERVER); retrying in 0.4 s (1 of 2)`), so a wait is never silent";
    models.md:271-273: retried "at most `max_retries` times (default 2) ... after ...
    HTTP ... 503"."""
    busy = wire.error(503, {"error": {"message": "overloaded"}}, {"retry-after": "0.1"})
    server = model_server([busy, text_reply("hello")])
    (tmp_path / "dsh.yml").write_text(
        "models:\n  fast:\n    provider: openai-compatible\n    model: q\n"
        f"    base_url: {server.url}\n"
    )
    done = dsh("-m", "fast", "run", "hi", env=cli_env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "hello\n")
    at = server.url.removesuffix("/v1")
    line = f"dsh: model 'fast': HTTP 503 from the server at {at}: overloaded (SERVER); "
    line += "retrying in 0.1 s (1 of 2)"
    assert line in done.stderr.splitlines()
    assert len(server.server.requests) == 2


@pytest.mark.parametrize(
    ("text", "name", "model", "url"),
    [
        (
            "openai-compatible:qwen2.5:0.5b@http://127.0.0.1:11434/v1",
            "openai-compatible:qwen2.5:0.5b",
            "qwen2.5:0.5b",
            "http://127.0.0.1:11434/v1",
        ),
        ("openai-compatible:a@b@http://h:1/v1", "openai-compatible:a@b", "a@b", "http://h:1/v1"),
        (
            "openai-compatible:a@httpx@https://h/v1",
            "openai-compatible:a@httpx",
            "a@httpx",
            "https://h/v1",
        ),
    ],
)
def test_only_an_at_before_http_starts_the_base_url(
    text: str, name: str, model: str, url: str
) -> None:
    """models.md:204 (`-m openai-compatible:qwen2.5:0.5b@http://127.0.0.1:11434/v1`) and
    models.md:212-213: "The model part may contain `:` and `@`; only an `@` followed by
    `http://` or `https://` starts the base URL. The model is registered as
    `provider:model`"."""
    parsed, config = parse_model_shorthand(text)
    assert (parsed, config.model, config.base_url) == (name, model, url)


def test_a_shorthand_with_colons_reaches_the_server_as_its_model_part(
    cli_env: dict[str, str], model_server: Any, tmp_path: Path
) -> None:
    """models.md:197-204: "`provider:model[@base_url]` stands for a config entry",
    `-m openai-compatible:qwen2.5:0.5b@...`: the server is asked for `qwen2.5:0.5b`."""
    server = model_server([text_reply("hi there")])
    shorthand = f"openai-compatible:qwen2.5:0.5b@{server.url}"
    done = dsh("-m", shorthand, "run", "hi", env=cli_env, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "hi there\n")
    [body] = server.bodies()
    assert body["model"] == "qwen2.5:0.5b"
    assert body["stream_options"] == {"include_usage": True}  # models.md:229-230
    assert body["messages"][0]["role"] == "system"  # models.md:227
