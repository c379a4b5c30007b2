"""``HookRecorder``: every call of the core's non-registration hooks, in order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dsh._quoted import did_you_mean
from dsh.hookspecs import CALL_STYLES, hookimpl
from dsh.plugins import PluginManager

__all__ = ["HookCall", "HookRecorder"]


@dataclass(frozen=True, slots=True)
class HookCall:
    name: str
    kwargs: dict[str, Any]


class HookRecorder:
    """Records every call of the core's interception, observation and lifecycle hooks.

    Its impls return None, so they change nothing. The ``dsh_hook_recorder`` fixture
    runs them before every other plugin's, so waterfall values are recorded as the first
    impl saw them; registered by hand, they are ``tryfirst`` in pluggy's order (a
    ``tryfirst`` plugin registered later runs before them).
    """

    def __init__(self, pm: PluginManager) -> None:
        self.calls: list[HookCall] = []
        #: the hooks recorded: every core hook except the registration hooks
        self.hooks = tuple(hook for hook, style in CALL_STYLES.items() if style != "register")
        for hook in self.hooks:
            spec = getattr(pm.hook, hook).spec
            assert spec is not None
            setattr(self, hook, self._impl(hook, spec.argnames))

    def _impl(self, hook: str, argnames: tuple[str, ...]) -> Callable[..., None]:
        # pluggy binds arguments by the impl's code object, so each impl is compiled
        # with exactly the hook's parameter names.
        params = ", ".join(argnames)
        source = f"def {hook}({params}):\n    record({hook!r}, {{{_pairs(argnames)}}})\n"
        namespace: dict[str, Any] = {"record": self._record}
        exec(source, namespace)
        return hookimpl(tryfirst=True)(namespace[hook])  # type: ignore[no-any-return]

    def _record(self, name: str, kwargs: dict[str, Any]) -> None:
        self.calls.append(HookCall(name, kwargs))

    def names(self) -> list[str]:
        return [call.name for call in self.calls]

    def get(self, name: str) -> list[HookCall]:
        """The calls of hook ``name``, in order. ValueError for a hook it does not record
        (a typo, a registration hook, a plugin's own hook): ``[]`` would pass unnoticed."""
        if name not in self.hooks:
            if CALL_STYLES.get(name) == "register":
                why = " (it records every core hook except the register_* ones)"
            else:
                why = did_you_mean(name, self.hooks)
            raise ValueError(f"HookRecorder records no hook {name!r}{why}")
        return [call for call in self.calls if call.name == name]


def _pairs(argnames: tuple[str, ...]) -> str:
    return ", ".join(f"{name!r}: {name}" for name in argnames)
