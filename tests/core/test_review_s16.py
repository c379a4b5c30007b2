"""Review of the sixteenth session's core changes (``known_keys`` and the public
``dsh.redact``; required plugin-settings fields of an agent's options with no section
to give them, in ``_config_validate.py`` and ``_code_options.py``), by hand mutation:
each test here failed on a mutant of the source that the other tests let through (the
mutant is named in the test's docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
from config_support import fails, write
from pydantic import BaseModel

import dsh
from dsh import DshError, hookimpl
from dsh._secrets import key_from_env, known_keys
from dsh.harness import Harness
from dsh.testing import ScriptedModel, scripted_harness

# -- dsh.redact ------------------------------------------------------------------------------


def test_a_key_that_begins_another_does_not_leave_the_longer_ones_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two keys dsh read, one the start of the other (a proxy key and the same with a
    suffix, say): the longer is hidden whole, as ``known_keys`` puts it first. Mutant:
    ``known_keys`` shortest first (``***`` then the longer key's last 4 characters,
    fewer than half of it: not hidden as a cut part either)."""
    short = "sk-review16-Qm7Vx2Lp9Rt4"
    longer = short + "Zk8W"
    monkeypatch.setenv("DSH_REVIEW16_SHORT", short)
    monkeypatch.setenv("DSH_REVIEW16_LONG", longer)
    key_from_env("DSH_REVIEW16_SHORT")
    key_from_env("DSH_REVIEW16_LONG")
    keys = known_keys()
    assert keys.index(longer) < keys.index(short)
    assert dsh.redact(f"sent {longer} and {short}") == "sent *** and ***"


# -- an agent's plugin options in dsh.yml ---------------------------------------------------


class Needs(BaseModel):
    level: int
    style: str = "plain"


def problems(err: Any) -> list[tuple[str, str]]:
    return [(p.path, p.reason) for p in (err, *err.more)]


def test_a_bad_value_beside_a_typo_in_an_agents_plugin_options_is_reported(
    tmp_path: Path,
) -> None:
    """Only when every error is a required field left out does a key the model would
    drop (a typo) stand in for them; a value of the wrong kind is reported as itself.
    Mutants: the typo reported whatever the other errors (``all(...)`` made always
    true, or ``any(...)``)."""
    bad_value = "agents:\n  - id: a\n    options: {needs: {level: x, levle: 2}}\n"
    found = problems(fails(write(tmp_path, bad_value), {"needs": Needs}))
    assert [path for path, _ in found] == ["agents[0].options.needs.level"]
    assert "integer" in found[0][1]
    # a field left out and a bad value: both are told, with the hint for the first
    mixed = "agents:\n  - id: a\n    options: {needs: {style: [1], levle: 2}}\n"
    found = problems(fails(write(tmp_path, mixed), {"needs": Needs}))
    assert found[0] == (
        "agents[0].options.needs.level",
        "Field required (plugin 'needs' has no section in this file to give it)",
    )
    assert [path for path, _ in found[1:]] == ["agents[0].options.needs.style"]


# -- an agent's plugin options in code ------------------------------------------------------


class Tone(BaseModel):
    level: int
    style: Literal["plain", "warm"] = "plain"


class TonePlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Tone)


async def refused(options: dict[str, Any], config: str | None = None) -> str:
    async with scripted_harness(
        ScriptedModel([]), plugins=[("tone", TonePlugin())], config_text=config
    ) as harness:
        with pytest.raises(DshError) as caught:
            await harness.agents.create("a", options={"model": "scripted", **options})
    return str(caught.value)


async def test_a_bad_value_beside_a_typo_in_code_options_is_reported() -> None:
    """As for the file. Mutants: the typo reported whatever the other errors
    (``all(...)`` made always true, or ``any(...)``)."""
    message = await refused({"tone": {"level": "x", "levle": 2}})
    assert message.startswith("agent 'a': option tone.level: Input should be a valid integer")
    message = await refused({"tone": {"style": "wram", "levle": 2}})
    assert message.startswith("agent 'a': option tone.style: Input should be 'plain' or 'warm'")
    assert "did you mean 'warm'?" in message


async def test_the_missing_field_hint_names_the_config_file_the_harness_read(
    tmp_path: Path,
) -> None:
    """Mutant: ``check_options`` without the config's ``source`` (the hint then names
    no file whatever config was read)."""
    path = tmp_path / "dsh.yml"
    path.write_text("agents: []\n")
    async with Harness(config=path, plugins=[("tone", TonePlugin())]) as harness:
        with pytest.raises(DshError) as caught:
            await harness.agents.create("a", options={"tone": {"style": "warm"}})
    assert str(caught.value) == (
        "agent 'a': option tone.level: Field required (plugin 'tone' has no section in the "
        f"config ({path}) to give it)"
    )


async def test_the_missing_field_hint_names_no_file_when_none_was_read() -> None:
    """Options in code with no config file, or a config given as text: no made-up name
    (``<defaults>``, ``<string>``) in the hint."""
    expected = (
        "agent 'a': option tone.level: Field required (plugin 'tone' has no section in the "
        "configuration to give it)"
    )
    assert await refused({"tone": {"style": "warm"}}) == expected
    assert await refused({"tone": {"style": "warm"}}, config="agents: []\n") == expected
