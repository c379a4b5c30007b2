"""docs/permissions.md and the plugin README are tested: their settings examples are
valid settings, their Python compiles, and the denials they quote are what the model
really reads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from dsh_permissions import PermissionSettings

pytestmark = pytest.mark.plugins("permissions")

ROOT = Path(__file__).parents[3]
DOCS = (ROOT / "docs" / "permissions.md", ROOT / "plugins" / "permissions" / "README.md")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(lang: str) -> list[Any]:
    found = []
    for path in DOCS:
        for number, (kind, code) in enumerate(FENCE.findall(path.read_text("utf-8"))):
            if kind == lang:
                found.append(pytest.param(code, id=f"{path.name}-{number}"))
    return found


def agent_settings(config: dict[str, Any]) -> list[Any]:
    return [a["options"]["permissions"] for a in config.get("agents", [])]


@pytest.mark.parametrize("code", blocks("yaml"))
def test_yaml_examples_hold_valid_settings(code):
    settings = agent_settings(yaml.safe_load(code))

    assert settings
    for each in settings:
        PermissionSettings.model_validate(each)


@pytest.mark.parametrize("code", blocks("python"))
def test_python_examples_compile(code):
    compile(code, "<docs>", "exec")


def quoted_denials() -> list[str]:
    text = (ROOT / "docs" / "permissions.md").read_text("utf-8")
    found = [" ".join(code.split()) for kind, code in FENCE.findall(text) if kind == "text"]
    return [block for block in found if block.startswith("Permission denied:")]


async def test_the_quoted_denials_are_what_the_model_reads(judge):
    rule = await judge({"deny": ["bash(rm *)"]}, "bash", {"command": "rm -rf build"})
    plan = await judge({}, "write", {"path": "a.txt"}, mode="plan")

    assert quoted_denials() == [rule.result.content, plan.result.content]


async def test_the_quick_start_does_what_it_says(judge):
    """The prose under the quick start's YAML, call by call (the corpus has no grep, so
    `read` on a directory stands in for a directory search; grep under a read rule is
    test_permissions_read_covers_grep.py)."""
    text = (ROOT / "docs" / "permissions.md").read_text("utf-8")
    quick = text[text.index("## Quick start") :]
    (rules,) = agent_settings(yaml.safe_load(FENCE.search(quick)[2]))
    rules = {key: value for key, value in rules.items() if key != "mode"}
    assert "read(.env)" in rules["deny"]

    async def decided(tool: str, **arguments: str) -> str:
        return (await judge(rules, tool, arguments)).decision

    assert await decided("bash", command="git status && pytest -q") == "allow"
    assert await decided("bash", command="git status; rm -rf build") == "deny"
    assert await decided("bash", command="git push origin main") == "ask"
    assert await decided("bash", command="cat .env") == "deny"  # read(.env) covers cat
    assert await decided("bash", command="make lint") == "ask"
    assert await decided("read", path="src/a.py") == "allow"
    for spelled in (".env", "src/../.env", "{ws}/.env", "innocent.txt"):
        assert await decided("read", path=spelled) == "deny", spelled
    assert await decided("read", path=".") == "deny"  # the directory holds .env
    assert await decided("read", path="src") == "allow"
    assert await decided("write", path="src/new.py") == "allow"


@pytest.mark.parametrize("command", ["rm -rf build", "rm -fr build", "rm -r -f build", "rm x"])
async def test_config_mds_example_deny_rule_stops_every_spelling_of_rm(judge, command):
    """docs/config.md's example wrote ``bash(rm -rf *)``, which ``rm -fr`` slips past
    (session-29 journey): the example must be the ``bash(rm *)`` this page teaches."""
    text = (ROOT / "docs" / "config.md").read_text("utf-8")
    example = yaml.safe_load(next(c for k, c in FENCE.findall(text) if "permissions:" in c))
    rules = {k: v for k, v in example["permissions"].items() if k != "mode"}
    assert (await judge(rules, "bash", {"command": command})).decision == "deny"
