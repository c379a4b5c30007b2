"""``HookRecorder.get(name)`` refuses a name it does not record (from a third-party plugin
author's review). Before: it returned ``[]`` for any name, so ``get("tool_execute")``
(a typo) or ``get("register_tools")`` (not recorded) could never fail a test."""

from __future__ import annotations

import pytest

from dsh.plugins import PluginManager
from dsh.testing import HookRecorder


def test_get_refuses_a_typo_saying_the_name_meant(dsh_hook_recorder: HookRecorder) -> None:
    with pytest.raises(ValueError, match="records no hook") as refused:
        dsh_hook_recorder.get("tool_execute")
    assert str(refused.value) == (
        "HookRecorder records no hook 'tool_execute'; did you mean 'tools_execute'?"
    )


def test_get_refuses_a_registration_hook_it_does_not_record(dsh_pm: PluginManager) -> None:
    recorder = HookRecorder(dsh_pm)
    with pytest.raises(ValueError, match="records no hook") as refused:
        recorder.get("register_tools")
    assert str(refused.value) == (
        "HookRecorder records no hook 'register_tools' (it records every core hook "
        "except the register_* ones)"
    )


def test_get_of_a_recorded_hook_not_called_is_empty(dsh_hook_recorder: HookRecorder) -> None:
    assert dsh_hook_recorder.get("tools_execute") == []
