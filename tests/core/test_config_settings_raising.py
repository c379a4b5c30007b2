"""A plugin's settings model whose validator raises something pydantic does not turn into
a ValidationError (KeyError, TypeError, LookupError...): a located ConfigError naming the
plugin, its model and the exception's type, as for any other bad value (not a traceback
out of ``dsh config check`` or ``dsh run``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from config_support import fails, write
from pydantic import BaseModel, ConfigDict, field_validator

from dsh import DshError, hookimpl
from dsh.config import add_settings
from dsh.testing import ScriptedModel, scripted_harness


class Suffix(BaseModel):
    model_config = ConfigDict(extra="forbid")
    suffix: str = "Be kind."

    @field_validator("suffix")
    @classmethod
    def _known(cls, v: str) -> str:
        return {"kind": "Be kind.", "nice": "Be nice."}[v]  # KeyError on any other


def _settings(
    plugin: str, model: type[BaseModel], section: str | None = None
) -> dict[str, type[BaseModel]]:
    settings: dict[str, type[BaseModel]] = {}
    add_settings(settings, plugin, model, section)
    return settings


@pytest.mark.parametrize(
    ("text", "where", "path"),
    [
        ("fullplug: {suffix: rude}\n", "1:1", "fullplug"),
        (
            "agents:\n  - id: a\n    options:\n      fullplug: {suffix: rude}\n",
            "4:7",
            "agents[0].options.fullplug",
        ),
    ],
)
def test_a_validator_raising_keyerror_is_a_located_problem(
    tmp_path: Path, text: str, where: str, path: str
) -> None:
    file = write(tmp_path, text)
    err = fails(file, _settings("fullplug", Suffix))
    assert (err.source, err.path) == (f"{file}:{where}", path)
    assert err.reason.startswith("plugin 'fullplug': its settings model Suffix raised KeyError at ")
    assert err.reason.endswith(
        " (its message is not shown: it may quote the value); a validator should raise "
        "ValueError, which dsh reports at the key"
    )
    assert err.__cause__ is None  # its message may quote a secret


def test_the_plugin_named_is_the_one_that_registered_the_section(tmp_path: Path) -> None:
    err = fails(
        write(tmp_path, "shared: {suffix: rude}\n"), _settings("fullplug", Suffix, "shared")
    )
    assert err.reason.startswith("plugin 'fullplug': its settings model Suffix raised KeyError")


def test_the_value_is_not_shown_but_where_the_model_raised_is(tmp_path: Path) -> None:
    err = fails(write(tmp_path, "fullplug: {suffix: sk-secret}\n"), _settings("fullplug", Suffix))
    assert "sk-secret" not in str(err)
    assert f"raised KeyError at {__file__}:{_known_line} " in err.reason


_known_line = Suffix._known.__func__.__code__.co_firstlineno + 3  # type: ignore[attr-defined]


class _FullPlug:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Suffix)


async def test_options_in_code_whose_model_raises_keyerror_are_a_dsh_error() -> None:
    async with scripted_harness(ScriptedModel([]), plugins=[("fullplug", _FullPlug())]) as h:
        with pytest.raises(DshError, match="settings model Suffix raised KeyError"):
            await h.agents.create("a", options={"model": "scripted", "fullplug": {"suffix": "x"}})
