"""The ids ``agents.create`` is given, checked before anything starts (found by a
review of embedding dsh from Python): an empty one, one starting with ``-`` (the
command line takes ``dsh sessions show -x`` for an option) or one holding a control
character (a newline breaks ``dsh sessions list``'s table) is refused, naming the id
and why; the default session id (``"{agent_id}-session-{uuid}"``) is then a good one
too."""

from __future__ import annotations

import json

import anyio
import pytest
from harness_support import nothing_left
from loop_support import LIMIT

from dsh import DshError
from dsh.testing import ScriptedModel, scripted_harness

OPTIONS = {"model": "scripted"}
DASH = "may not start with '-' (the command line would take it for an option)"

BAD = [
    ("", "may not be empty"),
    ("-rf", DASH),
    ("x\ny", "may not hold a control character (U+000A)"),
    ("x\x1b[2Jy", "may not hold a control character (U+001B)"),
    ("x\u2028y", "may not hold a control character (U+2028)"),
    # persistence's backends raised a raw UnicodeEncodeError at create
    ("a\udcffb", "may not hold a lone surrogate (U+DCFF): it is not text"),
]
IDS = ["empty", "dash", "newline", "escape", "line-separator", "surrogate"]


@pytest.mark.parametrize(("bad", "why"), BAD, ids=IDS)
async def test_a_bad_agent_id_is_refused_naming_it(bad: str, why: str) -> None:
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel([]), load_entry_points=False) as h:
            with pytest.raises(DshError) as refused:
                await h.agents.create(bad, options=OPTIONS)
            nothing_left(h)
    assert str(refused.value) == f"agent id {bad!r} {why}"


@pytest.mark.parametrize(("bad", "why"), BAD, ids=IDS)
async def test_a_bad_session_id_is_refused_naming_it(bad: str, why: str) -> None:
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel([]), load_entry_points=False) as h:
            with pytest.raises(DshError) as refused:
                await h.agents.create("a", bad, options=OPTIONS)
            nothing_left(h)
    assert str(refused.value) == f"agent 'a': session id {bad!r} {why}"


async def test_ids_with_spaces_dashes_and_letters_of_any_script_are_taken() -> None:
    with anyio.fail_after(LIMIT):
        async with scripted_harness(ScriptedModel([]), load_entry_points=False) as h:
            agent = await h.agents.create("my agent-1 ü", "séance 1-a", options=OPTIONS)
            assert agent.session.id == "séance 1-a"
            other = await h.agents.create("b-", options=OPTIONS)
            assert other.session.id.startswith("b--session-")


@pytest.mark.parametrize(("bad", "why"), BAD[1:-1], ids=IDS[1:-1])  # YAML has no lone surrogate
def test_a_bad_agent_id_in_dsh_yml_is_refused_with_its_line(bad: str, why: str) -> None:
    """Named with the file, line and key, as any dsh.yml error, not when the agent starts."""
    from dsh.config import load_config
    from dsh.errors import ConfigError

    text = "agents:\n  - id: " + json.dumps(bad) + "\n"  # YAML reads JSON's escapes
    with pytest.raises(ConfigError) as refused:
        load_config(text=text)
    assert refused.value.path == "agents[0].id"
    assert refused.value.reason == f"{bad!r} {why}"
