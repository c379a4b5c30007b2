"""A key in a tool call's arguments spelled with JSON escapes (``\\u0073k-...``, ``\\/``)
is hidden as one spelled plainly (dsh.llm._redact_answer.AnswerRedactor, the call's
arguments through dsh.llm._redact_json): the arguments are JSON text, and a model or a
JSON encoder may escape any character of a string; the tool would get the key, and the
session log would hold it, one decode away."""

from __future__ import annotations

import json
import random
import string
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from test_redact_plugin_models import PluginModel, Serves

from dsh._secrets import shortest_run
from dsh.llm import Chunk, Finish, TextDelta, ToolCallDelta
from dsh.llm._hidden_args import NOT_RUN
from dsh.llm._redact_answer import AnswerRedactor
from dsh.llm._redact_stream import SHORTEST_HELD
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


async def test_a_call_with_an_escaped_key_has_it_hidden_in_the_log_and_is_not_run() -> None:
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
    result = next(e.data for e in events if e.type == "tool/result")
    assert result["content"] == NOT_RUN and result["is_error"]  # run so, it would echo ***


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7, 1000])
@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        # the reviewer's F1c: "\n" then the key's tail from its "n" (16 of its 20)
        ("ABCDnEFGHIJKLMNOPQRS", r"x\nEFGHIJKLMNOPQRS", "x***"),
        # a run from a "\u00e9"'s hex digits (an "é", not in the key: left escaped)
        ("00e9ABCDEFGHIJKL", r"x\u00e9ABCDEFGHIJKL", "x***"),
        # a run to the "\" of a "\n", as the key's spelling has a "\"" there
        ('ABCDEFGHIJ"KLM', r"ABCDEFGHIJ\nz", "***z"),
        # a "\\" then the run: the run is not in the escape, which stays
        ("ABCDnEFGHIJKLMNOPQRS", r"x\\nEFGHIJKLMNOPQRS", "x\\***"),
    ],
    ids=["letter-before", "hex-before", "ends-in-escape", "backslash-before"],
)
def test_a_run_at_an_escape_is_hidden_to_its_ends(
    key: str, value: str, shown: str, size: int
) -> None:
    """A hidden run that begins or ends inside an escape is hidden from and to the
    escape's ends: the arguments stay JSON, the tool can read them
    (``dsh.llm._redact_json.out_of_escapes``; ``escape_start``: nothing shown ends in
    an escape a run may begin in)."""
    sent = '{"v": "' + value + '"}'
    json.loads(sent)
    got = json.loads(arguments_of(split(sent, size), (key,)))["v"]  # fails: not JSON
    if size == 1000:  # whole: the run, from and to the escape's ends
        assert got == shown
    else:  # a few characters a piece: those first shown stay (as in any text), whole
        before, after = shown.split("***")
        assert got.startswith(before) and got.endswith("***" + after), got
        assert len(got) - len(shown) < SHORTEST_HELD, got
        assert not [run for run in _runs(key) if run in got], got


def _runs(key: str) -> list[str]:
    """The runs of ``key`` that are hidden: it, or half of it or more from an end."""
    half = shortest_run(key)
    return [key[:n] for n in range(half, len(key) + 1)] + [
        key[n:] for n in range(len(key) - half + 1)
    ]


def _spelled(char: str, rand: random.Random) -> str:
    """``char`` in a JSON string, one of the ways an encoder may write it."""
    way = rand.random()
    if char == "/" and way < 0.3:
        return "\\/"
    if way < 0.4:
        return f"\\u{ord(char):04x}" if way < 0.2 else f"\\u{ord(char):04X}"
    return json.dumps(char)[1:-1]


@pytest.mark.parametrize("seed", range(4))
def test_arguments_stay_json_and_hide_the_key_randomized(seed: int) -> None:
    """Ordinary keys (letters, digits, ``-_/``) after and before random words (``\\``,
    ``"``, newlines...), written with random escapes, streamed in random pieces: the
    arguments stay JSON, and no run of the key that is hidden is in their strings."""
    rand = random.Random(seed)
    pool = string.ascii_letters + string.digits + "-_/"
    around = string.ascii_letters + ' .,\\"/\n'
    for _ in range(100):
        key = "".join(rand.choice(pool) for _ in range(rand.randint(8, 40)))
        words = ["".join(rand.choice(around) for _ in range(rand.randint(0, 12))) for _ in "ab"]
        start = rand.randint(1, len(key) // 2)
        if rand.random() < 0.5:  # an escape's letter before the run: "\n" + key from "n"
            letter = rand.choice("bfnrt")
            key = key[: start - 1] + letter + key[start:]
            words[0] += json.loads(f'"\\{letter}"')
        value = words[0] + key[start:] + words[1]
        sent = '{"v": "' + "".join(_spelled(c, rand) for c in value) + '"}'
        assert json.loads(sent) == {"v": value}
        pieces: list[str] = []
        done = 0
        while done < len(sent):
            size = rand.choice([1, 1, 2, 3, 5, 8, 20])
            pieces.append(sent[done : done + size])
            done += size
        got = json.loads(arguments_of(pieces, (key,)))["v"]  # fails if not JSON
        assert not [run for run in _runs(key) if run in got], (key, sent, got)


def test_escapes_are_read_from_their_start_after_a_long_run_of_backslashes() -> None:
    """What was shown is remembered from an escape's start (``StreamRedactor._show``):
    21 of 22 ``\\``s remembered (a key of 21) would pair the last with the ``\\n``'s,
    and the run from its ``n`` would leave a ``\\`` before ``***``."""
    key = "ABCDnEFGHIJKLMNOPQRST"
    sent = '{"v": "' + "\\\\" * 11 + "\\nEFGHIJKLMNOPQRST" + '"}'
    cut = sent.index("\\nE")
    got = json.loads(arguments_of([sent[:cut], sent[cut:]], (key,)))
    assert got == {"v": "\\" * 11 + "***"}
