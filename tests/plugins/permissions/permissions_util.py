"""Helpers shared by the permissions tests and their fixtures (conftest.py):
a recording front end, the corpus's tools, the workspace layout, a stand-in agent, and
the verdicts of bash commands (``refused``, ``allowed``) with the rule sets many of the
review tables judge them under."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh import ToolResult, hookimpl
from dsh.session import Session
from dsh.tools import Tool, ToolRegistry, tool
from dsh_permissions import PermissionAnswer, PermissionRequest


class Asker:
    """A front end: records each request and gives ``answer`` (or raises ``error``)."""

    def __init__(self, answer: PermissionAnswer | None = None, error: Exception | None = None):
        self.answer = answer
        self.error = error
        self.requests: list[PermissionRequest] = []

    @hookimpl(optionalhook=True)
    async def permission_ask(self, request: PermissionRequest) -> PermissionAnswer | None:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return self.answer


def corpus_tools(ran: list[str]) -> list[Tool]:
    """The corpus's tools, each declaring how its arguments are matched; each run is
    appended to ``ran``."""

    @tool(mutating=True, command_args=("command",))
    def bash(command: str) -> str:
        "Run a command."
        ran.append(f"bash {command}")
        return "ran"

    @tool(path_args=("path",))
    def read(path: str) -> str:
        "Read a file."
        ran.append(f"read {path}")
        return "ran"

    @tool(mutating=True, path_args=("path",), reads=False)  # as the built-in declares
    def write(path: str, content: str = "") -> str:
        "Write a file."
        ran.append(f"write {path}")
        return "ran"

    @tool(mutating=True, path_args=("path",))
    def edit(path: str, old: str = "", new: str = "") -> str:
        "Edit a file."
        ran.append(f"edit {path}")
        return "ran"

    @tool(mutating=True, path_args=("source", "target"))
    def copy(source: str, target: str) -> str:
        "Copy a file."
        ran.append(f"copy {source} {target}")
        return "ran"

    @tool(mutating=True, path_args=("paths",))
    def remove(paths: list[str]) -> str:
        "Remove files."
        ran.append(f"remove {paths}")
        return "ran"

    @tool
    def fetch(url: str) -> str:
        "Fetch a page (declares nothing: rules can only name it)."
        ran.append(f"fetch {url}")
        return "ran"

    @tool(mutating=True)
    def deploy() -> str:
        "Deploy (mutating, no arguments)."
        ran.append("deploy")
        return "ran"

    return [bash, read, write, edit, copy, remove, fetch, deploy]


def make_tools(ran: list[str]) -> ToolRegistry:
    registry = ToolRegistry()
    for each in corpus_tools(ran):
        registry.add("corpus", each)
    return registry


class CorpusTools:
    """A plugin registering the corpus's tools (for runs through the real loop)."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        for each in corpus_tools(self.ran):
            register(each)


@dataclass
class Layout:
    root: Path
    ws: Path
    outside: Path

    def fill(self, text: str) -> str:
        """``{ws}``, ``{outside}`` and ``{home}`` replaced (other braces are kept)."""
        for name, value in (("ws", self.ws), ("outside", self.outside)):
            text = text.replace("{" + name + "}", str(value))
        return text.replace("{home}", os.path.expanduser("~"))


class FakeAgent:
    """What the plugin reads from an agent (the loop's ReactLoopAgent has the same)."""

    def __init__(self, ws: Path, tools: ToolRegistry, relay: Any, options: dict[str, Any]):
        self.id = "corpus"
        self.workspace = ws
        self.tools = tools
        self.relay = relay
        self.options = options
        self.session = Session("corpus-session")


@dataclass
class Judged:
    decision: str
    result: ToolResult | None
    event: dict[str, Any]
    ran: list[str] = field(default_factory=list)
    requests: list[PermissionRequest] = field(default_factory=list)


# deny rules alone, for bypass mode: what could do what they deny is denied there
BYPASS_RM = {"deny": ["bash(rm *)"]}
BYPASS_PASSWD = {"deny": ["read(/etc/passwd)"]}
BYPASS_ENV = {"deny": ["read(.env)"]}
# every command allowed but those that could do what is denied
DENY_RM = {"deny": ["bash(rm *)"], "allow": ["bash"]}


async def refused(judge: Any, rules: dict[str, Any], command: str, mode: str = "default") -> Any:
    """The verdict of bash ``command`` under ``rules`` in ``mode``, checked to keep it
    from running: asked or denied (denied in bypass mode, where nothing is asked)."""
    judged = await judge(rules, "bash", {"command": command}, mode=mode)
    expected = ("deny",) if mode == "bypass" else ("ask", "deny")
    assert judged.decision in expected, (command, judged.event["reason"])
    return judged


async def allowed(judge: Any, rules: dict[str, Any], command: str, mode: str = "default") -> None:
    """Checks that bash ``command`` under ``rules`` in ``mode`` is allowed."""
    judged = await judge(rules, "bash", {"command": command}, mode=mode)
    assert judged.decision == "allow", (command, judged.event["reason"])
