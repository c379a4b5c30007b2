"""dsh: a minimal, pluggable agent harness."""

from __future__ import annotations

from dsh.errors import (
    ConfigError,
    DshError,
    EventDataError,
    HookError,
    ModelError,
    PluginLoadError,
    PluginValidationError,
)
from dsh.hookspecs import hookimpl, hookspec
from dsh.messages import (
    AssistantMessage,
    ContinuationDecision,
    Message,
    ModelRequest,
    ReasoningBlock,
    RequestErrorDecision,
    StopReason,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from dsh.plugins import PluginInfo, PluginManager, create_plugin_manager, list_plugins

__version__ = "0.1.0"

__all__ = [
    "AssistantMessage",
    "ConfigError",
    "ContinuationDecision",
    "DshError",
    "EventDataError",
    "HookError",
    "Message",
    "ModelError",
    "ModelRequest",
    "PluginInfo",
    "PluginLoadError",
    "PluginManager",
    "PluginValidationError",
    "ReasoningBlock",
    "RequestErrorDecision",
    "StopReason",
    "TextBlock",
    "ToolCall",
    "ToolResult",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "__version__",
    "create_plugin_manager",
    "hookimpl",
    "hookspec",
    "list_plugins",
]
