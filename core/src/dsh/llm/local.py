"""The local model: a llama.cpp server that dsh builds, starts and stops itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh.harness import Harness

__all__ = ["local_model"]


async def local_model(harness: Harness) -> str:
    """Start the local server for this harness and register its model; its name."""
    raise DshError(
        "the local model is not available yet; choose a model with -m provider:model "
        "or set ANTHROPIC_API_KEY, OPENAI_API_KEY or DEEPSEEK_API_KEY"
    )
