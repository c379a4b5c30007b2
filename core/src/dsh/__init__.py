"""dsh: a minimal, pluggable agent harness.

The public names below are imported on first use (PEP 562), so that ``import dsh``
and ``from dsh import hookimpl`` — what every plugin does at load time — stay cheap:
pydantic and anyio load only when a message model or the loop is needed.
"""

from __future__ import annotations

import importlib

#: not typing's (a type checker takes this one as typing's): ``python -m dsh`` and
#: ``python -m dsh.cli`` import this package before their first line runs, which makes
#: a Ctrl-C quiet from there on (``_dsh_command.quiet_ctrl_c``): nothing here may take
#: time before that, neither typing nor pluggy nor dsh's own modules.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from dsh._model_name import ModelName
    from dsh._secrets import get_logger, redact
    from dsh.errors import (
        AgentDisposedError,
        ConfigError,
        DshError,
        EventDataError,
        EventTypeError,
        HistoryReducerError,
        HookError,
        ModelError,
        PluginLoadError,
        PluginValidationError,
        SessionInUseError,
        StepLimitError,
        TurnError,
    )
    from dsh.harness import Harness
    from dsh.hookspecs import hookimpl, hookspec
    from dsh.messages import (
        AssistantMessage,
        ContinuationDecision,
        Message,
        ModelRequest,
        ProviderBlock,
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

_LAZY = {
    **dict.fromkeys(
        (
            "AgentDisposedError",
            "ConfigError",
            "DshError",
            "EventDataError",
            "EventTypeError",
            "HistoryReducerError",
            "HookError",
            "ModelError",
            "PluginLoadError",
            "PluginValidationError",
            "SessionInUseError",
            "StepLimitError",
            "TurnError",
        ),
        "dsh.errors",
    ),
    "hookimpl": "dsh.hookspecs",
    "hookspec": "dsh.hookspecs",
    **dict.fromkeys(
        (
            "AssistantMessage",
            "ContinuationDecision",
            "Message",
            "ModelRequest",
            "ProviderBlock",
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
        ),
        "dsh.messages",
    ),
    **dict.fromkeys(
        ("PluginInfo", "PluginManager", "create_plugin_manager", "list_plugins"), "dsh.plugins"
    ),
    "ModelName": "dsh._model_name",
    "Harness": "dsh.harness",
    "get_logger": "dsh._secrets",
    "redact": "dsh._secrets",
}

#: the modules ``import dsh`` held once (``dsh.errors.exception_words``), imported
#: when first used as the names above are
_MODULES = frozenset({"errors", "hookspecs"})


if not TYPE_CHECKING:  # to a type checker the names are the imports above: a typo is
    # an error (a module ``__getattr__`` would make ``from dsh import Anything`` Any)

    def __getattr__(name: str) -> Any:
        if name in _MODULES:  # dsh.errors.DshError after a bare `import dsh`
            return importlib.import_module(f"dsh.{name}")
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'dsh' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AgentDisposedError",
    "AssistantMessage",
    "ConfigError",
    "ContinuationDecision",
    "DshError",
    "EventDataError",
    "EventTypeError",
    "Harness",
    "HistoryReducerError",
    "HookError",
    "Message",
    "ModelError",
    "ModelName",
    "ModelRequest",
    "PluginInfo",
    "PluginLoadError",
    "PluginManager",
    "PluginValidationError",
    "ProviderBlock",
    "ReasoningBlock",
    "RequestErrorDecision",
    "SessionInUseError",
    "StepLimitError",
    "StopReason",
    "TextBlock",
    "ToolCall",
    "ToolResult",
    "ToolResultMessage",
    "ToolSpec",
    "TurnError",
    "Usage",
    "UserMessage",
    "__version__",
    "create_plugin_manager",
    "get_logger",
    "hookimpl",
    "hookspec",
    "list_plugins",
    "redact",
]
