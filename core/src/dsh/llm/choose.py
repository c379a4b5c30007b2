"""Which model a command-line agent uses, and why (said on stderr by the CLI).

Order: ``-m`` (a configured model name, ``local``, or ``provider:model[@url]``), then
``model:`` in dsh.yml, then the first provider whose key is in the environment, then
the local model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dsh.harness import Harness

__all__ = ["ENV_PROVIDERS", "Choice", "choose_model"]

#: (environment variable, shorthand) tried in order when nothing else names a model.
ENV_PROVIDERS: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai:gpt-4.1-mini"),
    ("DEEPSEEK_API_KEY", "deepseek:deepseek-chat"),
)


@dataclass(frozen=True, slots=True)
class Choice:
    """``name`` is registered in the harness (or is ``local``, which the caller starts)."""

    name: str
    why: str


def choose_model(
    harness: Harness, requested: str | None, env: Mapping[str, str] | None = None
) -> Choice:
    """Pick the model; a shorthand is built and registered under its own name."""
    env = os.environ if env is None else env
    if requested:
        if requested in harness.models.names() or requested == "local":
            return Choice(requested, "chosen with -m")
        return Choice(_register(harness, requested, env), "chosen with -m")
    default = harness.config.default_model
    if default:
        return Choice(default, f"the default model in {harness.config.source}")
    for variable, shorthand in ENV_PROVIDERS:
        if env.get(variable):
            return Choice(_register(harness, shorthand, env), f"{variable} is set")
    return Choice("local", "no model is configured and no provider key is set")


def _register(harness: Harness, shorthand: str, env: Mapping[str, str]) -> str:
    from dsh.llm.providers import build_model, parse_model_shorthand

    name, config = parse_model_shorthand(shorthand)
    if name not in harness.models.names():
        harness.models.add("cli", build_model(name, config, source="-m", env=env), name)
    return name
