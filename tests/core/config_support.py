"""Plugin settings models and helpers shared by the dsh.yml loading tests (test_config_*.py):
``write`` a dsh.yml, ``fails`` to load one, the ``SETTINGS`` of the plugins they load.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, model_validator

from dsh import ConfigError
from dsh.config import ModelName, load_config


class PermissionsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: Literal["ask", "allow", "deny"] = "ask"
    allow: list[str] = []


class CompactionSettings(BaseModel):  # leaves `extra` unset, as many plugin authors will
    threshold: float = 0.8

    class Keep(BaseModel):
        turns: int = 2

    keep: Keep = Keep()


SETTINGS: dict[str, type[BaseModel]] = {
    "permissions": PermissionsSettings,
    "compaction": CompactionSettings,
}


def write(tmp_path: Path, text: str, name: str = "dsh.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def fails(path: Path, settings: dict[str, type[BaseModel]] = SETTINGS) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(path, settings=settings)
    return info.value


class Summaries(BaseModel):
    model: ModelName | None = None
    fallback: ModelName = "builtin"  # the plugin's own default is not the file's problem
    note: str = "not a model name"


class Endpoint(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str  # required: the section gives it, an agent need not
    low: int = 0
    high: int = 10

    @model_validator(mode="after")
    def _ordered(self) -> Endpoint:
        if self.low > self.high:
            raise ValueError("low must not be above high")
        return self
