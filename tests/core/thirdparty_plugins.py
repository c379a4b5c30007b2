"""Three plugins written from the docs alone, as a third-party author would, for
test_thirdparty_study.py. Imported as ``thirdparty_plugins`` (tests/ has no packages).

Each is a plugin object named like its entry point would be (``usage-log``,
``repo-notes``, ``guard``), so its ``dsh.yml`` section and ``agents[].options`` key
carry that name. Only ``dsh`` and ``dsh.tools``/``dsh.commands`` are imported, and
pydantic only inside the hooks (writing-plugins.md: keep the import cheap).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dsh import hookimpl


class UsageLog:
    """``usage-log``: append each turn's token usage (from ``turn/end``) to the file its
    section names, buffering in ``session_event`` and writing in ``session_flush``; a
    ``dsh usage`` command prints the totals. ``session_event`` has no harness, so the
    session -> harness map is kept from ``agent_created`` to ``agent_disposed``
    (hooks.md, session_event)."""

    name = "usage-log"

    def __init__(self) -> None:
        self.owners: dict[str, Any] = {}
        self.pending: dict[str, list[dict[str, Any]]] = {}

    @staticmethod
    def settings_model() -> type:
        from pydantic import BaseModel, ConfigDict, field_validator

        class UsageLogSettings(BaseModel):
            model_config = ConfigDict(extra="forbid")
            file: str = "usage.jsonl"

            @field_validator("file")
            @classmethod
            def _jsonl(cls, value: str) -> str:
                if not value.endswith(".jsonl"):
                    raise ValueError("file must end with .jsonl")
                return value

        return UsageLogSettings

    def path(self, harness: Any) -> Path:
        section = harness.config.section(self.name)
        return Path(harness.workspace) / (section.file if section is not None else "usage.jsonl")

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(self.settings_model())

    @hookimpl
    def agent_created(self, agent: Any) -> None:
        self.owners[agent.session.id] = agent.harness

    @hookimpl
    def agent_disposed(self, agent: Any) -> None:
        self.owners.pop(agent.session.id, None)

    @hookimpl
    def session_event(self, session: Any, event: Any) -> None:
        if event.type == "turn/end":
            line = {"turn": event.data["turn"], "reason": event.data["reason"]}
            line["usage"] = event.data["usage"]
            self.pending.setdefault(session.id, []).append(line)

    @hookimpl
    async def session_flush(self, session: Any) -> None:
        lines = self.pending.pop(session.id, [])
        harness = self.owners.get(session.id)
        if lines and harness is None:  # nowhere to write: the map lost it
            raise RuntimeError(f"usage-log: no harness for session {session.id}")
        if lines:
            with self.path(harness).open("a", encoding="utf-8") as file:
                file.writelines(json.dumps(line) + "\n" for line in lines)

    @staticmethod
    def totals(path: Path) -> dict[str, int]:
        out: dict[str, int] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            for key, value in json.loads(line)["usage"].items():
                out[key] = out.get(key, 0) + value
        return out

    async def usage(self, context: Any) -> int:
        async with context.harness() as harness:
            path = self.path(harness)
        for key, value in sorted(self.totals(path).items()):
            print(f"{key}: {value}")
        return 0

    @hookimpl
    def register_commands(self, register: Any) -> None:
        from dsh.commands import Command

        register(Command("usage", "print token usage totals", self.usage))


class RepoNotes:
    """``repo-notes``: add the workspace's NOTES.md to every request's system prompt,
    unless the agent's ``repo-notes: {enabled: false}`` says not to; a typed tool
    ``notes_append(text)``."""

    name = "repo-notes"

    @staticmethod
    def settings_model() -> type:
        from pydantic import BaseModel, ConfigDict, Field

        class RepoNotesSettings(BaseModel):
            model_config = ConfigDict(extra="forbid")
            enabled: bool = True
            file: str = "NOTES.md"
            max_chars: int = Field(default=4000, gt=0)

        return RepoNotesSettings

    def settings(self, agent: Any) -> dict[str, Any]:
        section = agent.harness.config.section(self.name)
        merged = (section or self.settings_model()()).model_dump()
        merged.update(agent.options.get(self.name) or {})  # the agent's keys replace
        return merged

    @hookimpl
    def register_settings(self, register: Any) -> None:
        register(self.settings_model())

    @hookimpl
    def agent_request(self, agent: Any, request: Any) -> Any:
        settings = self.settings(agent)
        path = Path(agent.workspace) / settings["file"]
        if not settings["enabled"] or not path.is_file():
            return None
        notes = path.read_text(encoding="utf-8")[: settings["max_chars"]]
        return request.model_copy(update={"system": f"{request.system}\n\n# Notes\n{notes}"})

    @hookimpl
    def register_tools(self, register: Any) -> None:
        from dsh.tools import ToolContext, tool

        @tool(mutating=True)
        def notes_append(text: str, context: ToolContext) -> str:
            """Append a line to the repository notes."""
            path = context.resolve_path(self.settings(context.agent)["file"])
            with path.open("a", encoding="utf-8") as file:
                file.write(text.rstrip("\n") + "\n")
            return f"appended to {path.name}"

        register(notes_append)


GUARD_SOURCE = '''
"""guard: refuse tool calls whose arguments hold a configured word; stop a turn after
max_tool_calls tool calls."""

from dsh import hookimpl


def settings_model():
    from pydantic import BaseModel, ConfigDict, Field

    class GuardSettings(BaseModel):
        model_config = ConfigDict(extra="forbid")
        words: list[str] = []
        max_tool_calls: int | None = Field(default=None, gt=0)

    return GuardSettings


def settings(agent):
    return agent.harness.config.section("guard") or settings_model()()


@hookimpl
def register_settings(register):
    register(settings_model())


@hookimpl(tryfirst=True)
def tools_execute(agent, call):
    from dsh import ToolResult

    for word in settings(agent).words:
        if word in call.arguments:
            return ToolResult(call_id=call.id, content=f"guard: {word!r} refused", is_error=True)
    return None


@hookimpl
def agent_turn_continuation(agent, decision):
    from dsh import ContinuationDecision

    limit = settings(agent).max_tool_calls
    if limit is None or decision.action == "stop":
        return None
    calls = 0
    for event in reversed(agent.session.events):
        if event.type == "turn/start":
            break
        calls += event.type == "tool/call"
    if calls >= limit:
        return ContinuationDecision(action="stop", reason=f"guard: {limit} tool calls")
    return None
'''
