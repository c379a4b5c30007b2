"""The warning of a call denied as no one could be asked (``dsh._cli_unasked``): said
only where no front end was loaded (a loaded one that let ask_timeout run out logs the
same event), and its advice fits why the call was asked about (review rerev-cli,
findings 1 and 2)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import hookimpl
from dsh._cli_unasked import UnaskedWarning
from dsh.plugins import create_plugin_manager
from dsh.session import SessionEvent


def _event(*parts: dict[str, Any], asked: str = "no rule allows the command") -> SessionEvent:
    data = {
        "tool": "bash",
        "decision": "deny",
        "rule": None,
        "reason": f"it needs a person's approval ({asked}), and no answer came",
        "asked": asked,
        "front_end": None,
        "answer": None,
        "parts": [{"kind": "tool", "value": "bash", "decision": "allow", "by": "mode"}, *parts],
    }
    return SessionEvent("permission/decision", 1, 0.0, data)


def _said(event: SessionEvent, capsys: pytest.CaptureFixture[str], *plugins: object) -> str:
    pm = create_plugin_manager(plugins, load_entry_points=False)
    warning = UnaskedWarning(pm)
    pm.register(warning, "dsh-cli-approvals")
    warning.session_event(event)
    return capsys.readouterr().err


COMMAND = {"kind": "command", "value": "git push", "decision": "ask", "by": "mode", "rule": None}


class _Remote:
    """A front end that asks somewhere else (a chat app) and got no answer in time."""

    @hookimpl
    async def tools_approval(self, agent: Any, call: Any, request: Any) -> None:
        return None


def test_no_warning_when_a_loaded_front_end_let_the_time_run_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _said(_event(COMMAND), capsys, _Remote()) == ""
    assert "no one can be asked here" in _said(_event(COMMAND), capsys)


def test_the_advice_for_a_call_no_rule_allows(capsys: pytest.CaptureFixture[str]) -> None:
    said = _said(_event(COMMAND), capsys)
    assert "'bash' (command: git push)" in said
    assert "allow such calls with a rule in dsh.yml (permissions: allow)" in said


def test_the_advice_for_a_call_an_ask_rule_covers(capsys: pytest.CaptureFixture[str]) -> None:
    part = {**COMMAND, "by": "rule", "rule": "ask: bash(git push*)"}
    said = _said(_event(part), capsys)
    assert "the rule 'ask: bash(git push*)' asks: run dsh in a terminal, or remove that rule" in (
        said
    )
    assert "permissions: allow" not in said


@pytest.mark.parametrize(
    ("by", "asked"),
    [
        ("problem", "the command: its words are only known when it runs, so no rule can allow it"),
        ("mode", "the command: its words are only known when it runs, so no rule can allow it"),
    ],
)
def test_the_advice_for_a_call_no_rule_can_allow(
    capsys: pytest.CaptureFixture[str], by: str, asked: str
) -> None:
    part = {**COMMAND, "value": "echo $(id)", "by": by}
    said = _said(_event(part, asked=asked), capsys)
    assert "only a person at a terminal can allow it" in said
    assert "permissions: allow" not in said
