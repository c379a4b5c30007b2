"""A third-party author's study: three plugins (thirdparty_plugins.py) written from
README.md, docs/writing-plugins.md, hooks.md, testing.md, tools.md and config.md, tested
with ``dsh.testing`` only. Each test is one finding: a promise that holds and no test
checked from a plugin author's side, or (xfail) one that does not hold."""

from __future__ import annotations

import argparse
import json
import re
import types
from pathlib import Path
from typing import Any

import anyio
import pytest
from thirdparty_plugins import GUARD_SOURCE, RepoNotes, UsageLog

from dsh import ConfigError, ToolCall, create_plugin_manager, hookimpl
from dsh.commands import CommandContext
from dsh.testing import ScriptedModel, hang, run_turn, scripted_harness, tool_calls

DOCS = Path(__file__).parents[2] / "docs"
SCRIPTED = "models: {scripted: {provider: scripted}}\n"


def guard_module() -> types.ModuleType:
    module = types.ModuleType("dsh_guard_study")
    exec(compile(GUARD_SOURCE, "dsh_guard_study.py", "exec"), module.__dict__)
    return module


async def test_usage_log_keeps_the_turn_that_dispose_cut_off(tmp_path: Path) -> None:
    """hooks.md's pattern for a per-harness observer (map sessions in agent_created,
    drop them in agent_disposed) holds only if the disposal's session_flush comes before
    agent_disposed: the turn a disposal ends is written, not lost."""
    plugin = UsageLog()
    second = anyio.Event()

    def hang_in_second(request: Any) -> Any:
        second.set()
        return hang("partial")

    model = ScriptedModel(["one", hang_in_second])
    config = "usage-log: {file: u.jsonl}\n"
    async with scripted_harness(
        model,
        plugins=[(plugin.name, plugin)],
        load_entry_points=False,
        config_text=config,
        workspace=tmp_path,
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "first")
        agent.send("second")
        await second.wait()
    lines = [json.loads(line) for line in (tmp_path / "u.jsonl").read_text().splitlines()]
    assert [(line["turn"], line["reason"]) for line in lines] == [
        (1, "completed"),
        (2, "disposed"),
    ]


async def test_a_plugin_section_with_a_hyphenated_name_is_checked_with_its_line(
    tmp_path: Path,
) -> None:
    """config.md: a plugin's section, and its key under agents[].options, are validated by
    its register_settings model, naming the line, the key path and the reason."""
    config = (
        "usage-log: {file: u.txt}\n"
        "agents:\n"
        "  - id: a\n"
        "    model: scripted\n"
        "    options:\n"
        "      repo-notes: {enabled: maybe}\n" + SCRIPTED
    )
    plugins = [("usage-log", UsageLog()), ("repo-notes", RepoNotes())]
    with pytest.raises(ConfigError) as caught:
        async with scripted_harness(
            ScriptedModel([]), plugins=plugins, load_entry_points=False, config_text=config
        ):
            pass
    problems = [str(problem) for problem in caught.value.problems]
    assert problems[0].startswith("<string>:1:13: usage-log.file: file must end with .jsonl")
    assert problems[1].startswith("<string>:6:20: agents[0].options.repo-notes.enabled: ")


async def test_repo_notes_per_agent_option_and_typed_tool(tmp_path: Path) -> None:
    """The per-agent option (`agents[].options.repo-notes`) reaches the plugin as written,
    and a plugin tool's ``context.resolve_path`` works in the workspace. Agents started
    from ``agents:`` are reached with ``harness.agents.get(id)``, which no page shows."""
    (tmp_path / "NOTES.md").write_text("Use tabs.\n")
    model = ScriptedModel([tool_calls(("notes_append", {"text": "Run make."})), "ok", "ok"])
    config = (
        "agents:\n"
        "  - {id: yes-notes, model: scripted}\n"
        "  - {id: no-notes, model: scripted, options: {repo-notes: {enabled: false}}}\n" + SCRIPTED
    )
    plugin = RepoNotes()
    async with scripted_harness(
        model,
        plugins=[(plugin.name, plugin)],
        load_entry_points=False,
        config_text=config,
        workspace=tmp_path,
    ) as harness:
        on, off = harness.agents.get("yes-notes"), harness.agents.get("no-notes")
        assert on is not None and off is not None
        await run_turn(on, "note it")
        await run_turn(off, "hi")
    systems = [request.system for request in model.requests]
    assert "Use tabs." in systems[0] and "Run make." in systems[1]
    assert "Notes" not in systems[2]
    assert (tmp_path / "NOTES.md").read_text() == "Use tabs.\nRun make.\n"


async def test_a_plugin_command_runs_in_process_through_command_context(
    tmp_path: Path, dsh_pm: Any, dsh_register: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """testing.md says nothing of register_commands, and dsh.cli is not a public module;
    what works with public names only: build a ``dsh.commands.CommandContext`` over
    ``dsh_pm`` and call the command's ``run``. Its ``harness()`` reads the workspace's
    dsh.yml, so the command sees its validated section."""
    plugin = UsageLog()
    dsh_register(plugin, plugin.name)
    (tmp_path / "dsh.yml").write_text("usage-log: {file: mine.jsonl}\n")
    (tmp_path / "mine.jsonl").write_text('{"usage": {"input_tokens": 3}}\n' * 2)
    commands: list[Any] = []
    dsh_pm.relay.register_commands(lambda *args: commands.append(args[-1]))
    [command] = commands

    status = await command.run(
        CommandContext(args=argparse.Namespace(), pm=dsh_pm, workspace=tmp_path)
    )

    assert (status, capsys.readouterr().out) == (0, "input_tokens: 6\n")


async def test_the_recorder_sees_a_call_a_tryfirst_plugin_answered(
    dsh_pm: Any, dsh_register: Any, dsh_hook_recorder: Any
) -> None:
    dsh_register(guard_module(), "guard")
    settings = guard_module().settings_model()(words=["secret"])
    config = types.SimpleNamespace(section=lambda name: settings)
    agent = types.SimpleNamespace(harness=types.SimpleNamespace(config=config))
    call = ToolCall(id="c1", name="read", arguments='{"path": "secret.txt"}')

    result = await dsh_pm.relay.tools_execute(agent=agent, call=call, turn=1, step=1)

    assert result.is_error
    assert dsh_hook_recorder.names() == ["tools_execute"]


async def test_a_stop_decisions_reason_is_in_the_log(tmp_path: Path) -> None:
    """A budget guard's stop ends the turn with its reason in ``turn/end`` (it was
    dropped: the turn looked like the model's own end)."""
    model = ScriptedModel([tool_calls(("ls", {"path": "."})), "never asked"])
    async with scripted_harness(
        model,
        plugins=[("guard", guard_module())],
        load_entry_points=False,
        config_text="guard: {max_tool_calls: 1}\n",
        workspace=tmp_path,
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        result = await agent.prompt("list")
    assert len(model.requests) == 1  # the guard did stop the turn
    assert result.reason == "completed"
    assert result.stopped is not None and "guard: 1 tool calls" in result.stopped
    assert result.events[-1].data["stopped"] == result.stopped


async def test_a_tools_context_workspace_is_the_agents_own(tmp_path: Path) -> None:
    """A plugin tool of an agent created with its own workspace gets that workspace as
    ``context.workspace`` (and resolves paths in it), as its file tools do."""
    seen: list[Path] = []

    class Where:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            from dsh.tools import ToolContext, tool

            @tool
            def where(context: ToolContext) -> str:
                """Where the tool runs."""
                seen.append(context.workspace)
                return "ok"

            register(where)

    (tmp_path / "sub").mkdir()
    model = ScriptedModel([tool_calls(("where", {})), "ok"])
    async with scripted_harness(
        model, plugins=[("where", Where())], load_entry_points=False, workspace=tmp_path
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"}, workspace="sub")
        await run_turn(agent, "where?")
    assert seen == [tmp_path / "sub"]


def test_the_docs_say_tool_context_workspace_is_the_agents() -> None:
    for page in ("tools.md", "testing.md"):
        text = (DOCS / page).read_text(encoding="utf-8")
        assert "the harness's directory" not in text, page


def test_settings_examples_import_pydantic_inside_the_hook() -> None:
    for page, heading in (("hooks.md", "## `register_settings"), ("config.md", "## Plugin")):
        text = (DOCS / page).read_text(encoding="utf-8")
        section = text[text.index(heading) :]
        example = section[section.index("```python") :].split("```", 2)[1]
        assert not re.search(r"^from pydantic|^import pydantic", example, re.M), page


PERMISSIONS_ALLOW_NOTHING = "permissions: {mode: default}\n"


@pytest.mark.plugins("permissions")
async def test_a_tryfirst_guard_named_guard_runs_after_permissions(
    install: Any, tmp_path: Path
) -> None:
    """hooks.md, Order: among tryfirst impls the later-registered runs first, and entry
    points register sorted by name. So a tryfirst guard installed as ``guard`` runs
    after dsh-permissions (``permissions``, tryfirst too): a person is asked about a call
    the guard then refuses. Only a name sorting after 'permissions' puts it first."""
    from dsh_permissions import PermissionAnswer

    asked: list[str] = []

    class Approver:
        @hookimpl
        def permission_ask(self, request: Any) -> Any:
            asked.append(request.tool)
            return PermissionAnswer.once()

    install("dsh-guard-study", "guard", "dsh_guard_study_ep", GUARD_SOURCE)
    pm = create_plugin_manager(
        select=["guard", "permissions"], env={"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"}
    )
    model = ScriptedModel([tool_calls(("write", {"path": "secret.txt", "content": "x"})), "ok"])
    async with scripted_harness(
        model,
        pm=pm,
        plugins=[("approver", Approver())],
        config_text="guard: {words: [secret]}\n" + PERMISSIONS_ALLOW_NOTHING,
        workspace=tmp_path,
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "write it")
    [result] = [event.data for event in events if event.type == "tool/result"]
    assert asked == ["write"]
    assert result["content"] == "guard: 'secret' refused"
    assert not (tmp_path / "secret.txt").exists()
