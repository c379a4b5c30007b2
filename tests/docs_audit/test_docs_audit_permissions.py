"""docs/permissions.md's examples of command rules, run through the permissions plugin
as the page states them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from docs_files import ROOT
from permissions_audit_support import decision_events

pytestmark = pytest.mark.plugins("permissions")


async def decisions(workspace: Path, rules: str, *commands: str) -> dict[str, str]:
    """{command: allow or deny} for `bash` calls of `commands` under `rules` (the
    permissions section's YAML), with no front end to ask (an ask is a deny)."""
    calls = [(f"bash#c{i}", {"command": command}) for i, command in enumerate(commands)]
    found = await decision_events(workspace, f"permissions: {rules}\n", *calls)
    return {commands[int(d["call_id"][1:])]: d["decision"] for d in found}


def rules_named_in(words: str) -> list[str]:
    """The `bash(...)` rules of the permissions.md sentence that holds ``words``."""
    text = " ".join((ROOT / "docs" / "permissions.md").read_text("utf-8").split())
    at = text.index(words)
    sentence = text[text.rindex(". ", 0, at) : text.index(". ", at + len(words))]
    return re.findall(r"bash\([^)`]*\)", sentence)


async def test_the_rules_the_page_names_allow_xargs_ls(tmp_path: Path) -> None:
    """permissions.md, Command patterns: under `ask: bash(git push*)`, `xargs ls` is not
    asked about for the pattern, "and `allow: [bash]`, or rules allowing each of their
    parts (`bash(xargs ls*)` and `bash(ls*)`: the command behind `xargs` is a part),
    still allow them"."""
    named = rules_named_in("`find . -exec git add {} +` are not")
    assert "bash(xargs ls*)" in named
    allow = json.dumps(["bash(echo *)", *named])
    rules = f'{{ask: ["bash(git push*)"], allow: {allow}}}'
    found = await decisions(tmp_path, rules, "echo a | xargs ls")
    assert found == {"echo a | xargs ls": "allow"}
    rules = '{ask: ["bash(git push*)"], allow: [bash]}'
    assert await decisions(tmp_path, rules, "echo a | xargs ls") == found
