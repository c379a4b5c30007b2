"""A model API key never reaches the session log or the model through a tool's output.

bash runs without the key variables (docs/tools.md), but a command can still read the
environment of dsh itself (``/proc/$PPID/environ``), and a plugin's tool can read
anything: so every tool result is cleared of the keys' values before it is logged,
whichever tool produced it (found by the CI operator study: ``bash(ruff check *)``
allowed ``ruff check /proc/<ppid>/environ``, which printed the key)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from loop_support import turn_events

from dsh import hookimpl
from dsh.testing import ScriptedModel, text, tool_calls
from dsh.tools import tool

KEY = "sk-test-SECRET-0123456789"
GATEWAY = "gw-secret-abcdefgh"


@tool
def environment(name: str) -> str:
    "The value of an environment variable."
    return f"{name}={os.environ.get(name, '')}"


class Env:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(environment)


async def turn_with(
    calls: list[tuple[str, dict[str, Any]]], tmp_path: Path, config: str = ""
) -> Any:
    model = ScriptedModel([tool_calls(*calls), text("done")])
    events = await turn_events(
        model, ("env", Env()), workspace=tmp_path, config=config or None, within=30
    )
    return events, model


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MY_GATEWAY_KEY", GATEWAY)
    monkeypatch.setenv("SHORT_KEY", "abc")


@pytest.mark.usefixtures("keys")
async def test_a_command_that_prints_a_key_shows_it_hidden(tmp_path: Path) -> None:
    """(tests/cli/test_run_secrets.py: the same through /proc/$PPID/environ.)"""
    (tmp_path / "leak.txt").write_text(f"OPENAI_API_KEY={KEY}\n")
    events, model = await turn_with([("bash", {"command": "cat leak.txt"})], tmp_path)
    (result,) = [e.data for e in events if e.type == "tool/result"]
    assert result["content"].startswith("OPENAI_API_KEY=***\n"), result["content"]
    logged = "".join(e.to_json() for e in events)
    assert KEY not in logged
    assert KEY not in repr(list(model.requests[1].messages))  # nor what the model reads


@pytest.mark.usefixtures("keys")
async def test_any_tools_output_is_cleared_of_every_configured_key(tmp_path: Path) -> None:
    config = (
        "models:\n  gw: {provider: openai-compatible, base_url: 'http://127.0.0.1:9/v1', "
        "model: m, api_key_env: MY_GATEWAY_KEY}\n"
    )
    calls = [
        ("environment", {"name": "OPENAI_API_KEY"}),
        ("environment", {"name": "MY_GATEWAY_KEY"}),
        ("environment", {"name": "SHORT_KEY"}),
    ]
    events, _ = await turn_with(calls, tmp_path, config)
    contents = [e.data["content"] for e in events if e.type == "tool/result"]
    # a value shorter than 8 characters is left alone: hiding it would garble text
    assert contents == ["OPENAI_API_KEY=***", "MY_GATEWAY_KEY=***", "SHORT_KEY=abc"]


async def test_without_keys_tool_output_is_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    events, _ = await turn_with([("environment", {"name": "HOME"})], tmp_path)
    (result,) = [e.data for e in events if e.type == "tool/result"]
    assert result["content"] == f"HOME={os.environ.get('HOME', '')}"


def test_the_key_variables_are_the_built_in_providers_without_importing_them() -> None:
    from dsh._secrets import PROVIDER_KEY_VARIABLES
    from dsh.llm.providers import PROVIDERS

    built_in = {p.api_key_env for p in PROVIDERS.values() if p.api_key_env}
    assert set(PROVIDER_KEY_VARIABLES) == built_in


@pytest.mark.usefixtures("keys")
async def test_a_key_the_output_cap_cuts_in_two_is_hidden_on_both_sides(tmp_path: Path) -> None:
    """bash keeps the first and last 15,000 bytes of a long output: a key across either
    edge of the cut would leave a part of itself on one side; the cap leaves out a word
    it cuts through whole, so no part of the key is shown."""
    from dsh.builtin_tools._bash import MAX_OUTPUT_BYTES

    half = MAX_OUTPUT_BYTES // 2
    head_cut = "x" * (half - 15) + KEY  # 15 of the key's 25 characters stay in the head
    tail_cut = KEY + "y" * (half - 15)  # the tail starts 15 characters before the key ends
    (tmp_path / "long.txt").write_text(head_cut + "z" * 5000 + tail_cut)
    events, _ = await turn_with([("bash", {"command": "cat long.txt"})], tmp_path)
    (result,) = [e.data["content"] for e in events if e.type == "tool/result"]
    assert "bytes of output cut here" in result
    assert KEY[:8] not in result
    assert KEY[-8:] not in result
    head, tail = result.split("\n[... ")
    # the cut word is left out, at most 512 bytes of it on each side
    assert set(head) == {"x"} and len(head) == 15_000 - 512
    assert "]\n" + "y" * (15_000 - 512) + "\n[exit code 0]" in tail


def test_parts_of_a_key_at_least_half_its_length_are_hidden_shorter_ones_are_not() -> None:
    from dsh._secrets import redact

    key = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"  # 44 characters: half is 22
    assert redact(f"a {key[:22]}\n[cut]", (key,)) == "a ***\n[cut]"
    assert redact(f"{key[-22:]} b", (key,)) == "*** b"
    assert redact(f"{key[:30]}{key[-30:]}", (key,)) == "***"  # overlapping parts: one
    assert redact(f"{key[:21]}.{key[-21:]}", (key,)) == f"{key[:21]}.{key[-21:]}"
    assert redact("prefix sk-proj- as in docs", (key,)) == "prefix sk-proj- as in docs"
    assert redact(key[5:30], (key,)) == key[5:30]  # neither end of the key: left alone


async def test_a_key_longer_than_512_bytes_the_cap_cuts_is_left_out_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap leaves out as much of the cut word as the longest secret has bytes: a
    1,200-character key cut 1,000 characters in left 488 of them (under half: not
    hidden) when at most 512 bytes were left out."""
    key = "sk-" + "".join(chr(ord("a") + n % 26) + str(n % 10) for n in range(600))[:1197]
    monkeypatch.setenv("OPENAI_API_KEY", key)
    (tmp_path / "dump.txt").write_text("a" * 14_000 + " " + key + " " + "b" * 20_000)
    events, _ = await turn_with([("bash", {"command": "cat dump.txt"})], tmp_path)
    (result,) = [e.data["content"] for e in events if e.type == "tool/result"]
    head, _ = result.split("\n[... ")
    assert head == "a" * 14_000 + " "
    assert key[:8] not in result and "***" not in result
