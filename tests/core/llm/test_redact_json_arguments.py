"""A key in a tool call's arguments spelled with JSON escapes (``\\u0073k-...``, ``\\/``)
is hidden as one spelled plainly (dsh.llm._redact_stream.AnswerRedactor, the call's
arguments through dsh.llm._redact_json): the arguments are JSON text, and a model or a
JSON encoder may escape any character of a string; the tool would get the key, and the
session log would hold it, one decode away."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from test_redact_plugin_models import PluginModel, Serves

from dsh.llm import Chunk, Finish, TextDelta, ToolCallDelta
from dsh.llm._redact_stream import SHORTEST_HELD, AnswerRedactor
from dsh.testing import run_turn, scripted_harness

KEY = "plugin-secret-4f2a9c7e1b6d8a30"
#: an AWS-style secret key: '/' in it, which PHP's and others' encoders write '\/'
SLASHED = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


class Answers(PluginModel):
    """Its chunks once, then a plain answer."""

    async def _answer(self) -> AsyncIterator[Chunk]:
        said = self.chunks if len(self.streams) == 1 else [TextDelta("done"), Finish("stop")]
        for chunk in said:
            yield chunk


def escaped(secret: str, every: int = 1) -> str:
    """``secret`` with every ``every``-th character written as a ``\\uXXXX`` escape."""
    return "".join(f"\\u{ord(c):04x}" if i % every == 0 else c for i, c in enumerate(secret))


def arguments_of(pieces: list[str], secrets: tuple[str, ...]) -> str:
    hide = AnswerRedactor(secrets)
    out: list[Chunk] = []
    for number, piece in enumerate(pieces):
        first = number == 0
        out += hide.take(ToolCallDelta(0, "c1" if first else None, "t" if first else None, piece))
    out += hide.take(Finish("tool_calls"))
    return "".join(c.arguments for c in out if isinstance(c, ToolCallDelta))


def split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 1000])
@pytest.mark.parametrize(
    ("spelled", "secret"),
    [
        (escaped(KEY), KEY),
        (escaped(KEY, 3), KEY),
        (escaped(KEY).upper().replace("\\U", "\\u"), KEY),
        (SLASHED.replace("/", "\\/"), SLASHED),
        (escaped(SLASHED, 2).replace("/", "\\/"), SLASHED),
    ],
    ids=["all-escaped", "every-third", "upper-hex", "slash", "mixed"],
)
def test_a_json_escaped_key_in_arguments_is_hidden(spelled: str, secret: str, size: int) -> None:
    raw = '{"command": "curl -H \'k: ' + spelled + "' x\"}"
    assert json.loads(raw)["command"] == f"curl -H 'k: {secret}' x"
    command = json.loads(arguments_of(split(raw, size), (secret,)))["command"]
    # as for a key written plainly: streamed a character or two a piece (here: an escape
    # a piece), those first characters show before the rest is hidden
    shown = command.removeprefix("curl -H 'k: ").removesuffix("***' x")
    assert secret.startswith(shown) and len(shown) < SHORTEST_HELD, command


@pytest.mark.parametrize("size", [1, 2, 1000])
def test_other_escapes_pass_as_they_came(size: int) -> None:
    raw = r'{"a": "\\u0070 \"q\" \n \u00e9 \u0041 \/ \\\/ \ud83d\ude00 tab\t"}'
    assert arguments_of(split(raw, size), (KEY,)) == raw


async def test_a_tool_called_with_an_escaped_key_gets_it_hidden_and_the_log_too() -> None:
    raw = '{"command": "echo \'' + escaped(KEY) + "'\"}"
    model = Answers([TextDelta("ok"), ToolCallDelta(0, "c1", "bash", raw), Finish("tool_calls")])
    async with scripted_harness(plugins=[Serves(model)], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "own"})
        with anyio.fail_after(10):
            events = await run_turn(agent, "go")
    calls: list[Any] = [e.data for e in events if e.type == "tool/call"]
    message = next(e.data["message"] for e in events if e.type == "assistant/message")
    chunks = [
        e.data for e in events if e.type == "assistant/chunk" and e.data["kind"] == "tool_call"
    ]
    for arguments in (
        message["content"][1]["arguments"],
        "".join(c["arguments"] for c in chunks),
        *(json.dumps(c) for c in calls),
    ):
        assert KEY not in json.dumps(json.loads(arguments)) and KEY not in arguments
    assert json.loads(message["content"][1]["arguments"]) == {"command": "echo '***'"}
    result = next(e.data["content"] for e in events if e.type == "tool/result")
    assert result.startswith("***"), result  # what the tool got, and echoed


@pytest.mark.xfail(
    strict=True,
    reason="dsh.llm._redact_stream.StreamRedactor._show cuts the arguments' JSON text at any "
    "character: a hidden run that begins with the letter of an escape (\\n + the key's tail "
    "from its 'n') leaves the backslash before *** (an invalid escape: the tool cannot read "
    "its arguments); the runs' edges should move out to the escapes' ends",
)
@pytest.mark.parametrize("size", [4, 1000])
def test_a_run_beginning_inside_an_escape_leaves_valid_json(size: int) -> None:
    key = "ABCDnEFGHIJKLMNOPQRS"
    sent = json.dumps({"v": "x\nEFGHIJKLMNOPQRS"})  # "nEFGH...S": 16 of the key's 20
    got = arguments_of(split(sent, size), (key,))
    assert "EFGHIJKLMNOPQRS" not in got
    assert json.loads(got)["v"].startswith("x")
