"""A float setting given NaN (``.nan`` in YAML) is said to be no number, at its file
place and key path: it fails every comparison, and was refused as "Input should be
greater than 0" (a review). An infinity where the setting wants a finite number
(``allow_inf_nan=False``) names it; where it is taken (a timeout or ``max_wait`` of
``.inf``: no limit) it still is, and ``-.inf`` is out of range as any negative number."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from config_support import fails, write
from pydantic import BaseModel, Field

from dsh import DshError, hookimpl
from dsh.config import load_config
from dsh.testing import ScriptedModel, scripted_harness

NAN = "Input should be a number, not .nan (NaN)"
FLOATS = ["timeout", "read_timeout", "max_wait"]


@pytest.mark.parametrize("key", FLOATS)
def test_a_models_float_setting_of_nan_is_said_to_be_no_number(tmp_path: Path, key: str) -> None:
    path = write(tmp_path, f"models:\n  m:\n    provider: x\n    {key}: .nan\n")
    err = fails(path)
    assert (err.source, err.path, err.reason) == (f"{path}:4:5", f"models.m.{key}", NAN)


@pytest.mark.parametrize("key", FLOATS)
def test_a_models_float_setting_of_infinity_is_no_limit_and_of_minus_infinity_too_small(
    tmp_path: Path, key: str
) -> None:
    config = load_config(write(tmp_path, f"models:\n  m:\n    provider: x\n    {key}: .inf\n"))
    assert getattr(config.models["m"], key) == math.inf
    err = fails(write(tmp_path, f"models:\n  m:\n    provider: x\n    {key}: -.inf\n"))
    assert err.path == f"models.m.{key}"
    assert err.reason.startswith("Input should be greater than")


class Pace(BaseModel):
    """A plugin's settings: one float that takes an infinity, one that does not."""

    wait: float = Field(default=1.0, gt=0, le=10)
    rate: float = Field(default=1.0, gt=0, allow_inf_nan=False)


class PacePlugin:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(Pace)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (".nan", NAN),
        (".NaN", NAN),
        (".inf", "Input should be a finite number, not .inf"),
        ("-.inf", "Input should be a finite number, not -.inf"),
    ],
)
def test_a_plugin_sections_float_says_nan_and_infinity(
    tmp_path: Path, value: str, reason: str
) -> None:
    path = write(tmp_path, f"pace:\n  wait: 2\n  rate: {value}\n")
    err = fails(path, {"pace": Pace})
    assert (err.source, err.path, err.reason) == (f"{path}:3:3", "pace.rate", reason)
    # a bound's words for NaN were no better: NaN is below no bound and above none
    err = fails(write(tmp_path, "pace:\n  wait: .nan\n"), {"pace": Pace})
    assert (err.path, err.reason) == ("pace.wait", NAN)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (math.nan, "Input should be a number, not NaN"),
        (math.inf, "Input should be a finite number, not inf"),
    ],
)
async def test_options_given_in_code_say_it_in_pythons_words(value: float, reason: str) -> None:
    async with scripted_harness(ScriptedModel([]), plugins=[("pace", PacePlugin())]) as harness:
        with pytest.raises(DshError) as caught:
            await harness.agents.create("a", options={"model": "scripted", "pace": {"rate": value}})
    assert str(caught.value) == f"agent 'a': option pace.rate: {reason}"
