"""A real turn for the permissions tests: the scripted model calls the core's built-in
tools (real files, the real ``bash`` tool) one step at a time through dsh-permissions,
and a front end gives its answers in turn (then "deny")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

import dsh_permissions
from dsh import hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh_permissions import PermissionAnswer, PermissionRequest


class Answers:
    """A front end giving ``answers`` in turn, then "deny"; records each request."""

    def __init__(self, answers: Sequence[PermissionAnswer] = ()) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    @hookimpl(optionalhook=True)
    async def permission_ask(self, request: PermissionRequest) -> PermissionAnswer:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else PermissionAnswer.deny("no")


@dataclass
class Turn:
    decisions: list[dict[str, Any]]
    #: each tool result's content, in call order
    results: list[str]
    #: the texts of the command subjects of each question asked
    questions: list[list[str]]


async def real_turn(
    workspace: Path,
    rules: dict[str, Any],
    calls: Sequence[tuple[str, dict[str, Any]]],
    answers: Sequence[PermissionAnswer] = (),
) -> Turn:
    """Run one turn whose model makes ``calls``, one per step."""
    model = ScriptedModel([*(tool_calls(c) for c in calls), text("done")])
    front_end = Answers(answers)
    plugins = [("permissions", dsh_permissions), ("front_end", front_end)]
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, workspace=workspace
    ) as harness:
        options = {"model": "scripted", "permissions": rules}
        agent = await harness.agents.create("a", options=options)
        with anyio.fail_after(30):
            events = await run_turn(agent, "go")
    model.assert_complete()
    return Turn(
        [e.data for e in events if e.type == "permission/decision"],
        [e.data["content"] for e in events if e.type == "tool/result"],
        [[text for kind, text in r.subjects if kind == "command"] for r in front_end.requests],
    )


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("bash", {"command": command})
