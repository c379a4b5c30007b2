"""Model access: the adapter protocol, stream chunks, the assembler and the registry."""

from __future__ import annotations

from dsh.llm.assemble import Assembler
from dsh.llm.base import (
    Chunk,
    Finish,
    Model,
    ModelInfo,
    ProviderBlockChunk,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from dsh.llm.registry import ModelRegistry

__all__ = [
    "Assembler",
    "Chunk",
    "Finish",
    "Model",
    "ModelInfo",
    "ModelRegistry",
    "ProviderBlockChunk",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallDelta",
    "UsageChunk",
]
