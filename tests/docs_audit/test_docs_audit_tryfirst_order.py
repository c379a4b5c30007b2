"""docs/hooks.md (`tools_execute`) and docs/writing-plugins.md: a plugin's `tryfirst`
`tools_execute` impl is not first of all: among `tryfirst` impls the later registered
runs first, so dsh-permissions' check (entry point `permissions`) runs before the impl
of a plugin whose entry point sorts before it, and a call it denies never reaches that
impl. The pages said only "answer or refuse tool calls before the core runs them"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh import ToolCall, hookimpl
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls

DOCS = Path(__file__).parents[2] / "docs"


@pytest.mark.plugins("permissions")
@pytest.mark.parametrize(("guard", "reached"), [("guard", False), ("zguard", True)])
async def test_permissions_answers_before_a_tryfirst_impl_that_sorts_before_it(
    tmp_path: Path, guard: str, reached: bool
) -> None:
    import dsh_permissions

    seen: list[str] = []

    class Guard:
        @hookimpl(tryfirst=True)
        def tools_execute(self, call: ToolCall) -> None:
            seen.append(call.name)

    # entry points are registered sorted by name: passed in that order here
    named: list[tuple[str, Any]] = [(guard, Guard()), ("permissions", dsh_permissions)]
    plugins = sorted(named, key=lambda item: item[0])
    model = ScriptedModel([tool_calls(("ls", {"path": "."})), text("done")])
    async with scripted_harness(
        model,
        plugins=plugins,
        load_entry_points=False,
        config_text="permissions: {deny: [ls]}\n",
        workspace=tmp_path,
    ) as h:
        await run_turn(await h.agents.create("a", options={"model": "scripted"}), "go")
    assert seen == (["ls"] if reached else [])


def test_the_pages_say_so() -> None:
    hooks = (DOCS / "hooks.md").read_text()
    section = hooks[hooks.index("## `tools_execute(") : hooks.index("## `agent_turn_continuation(")]
    said = " ".join(section.split())
    assert "a plugin whose entry point's name sorts before `permissions` gets each call" in said
    assert "a call the check denies never reaches it" in said
    guide = " ".join((DOCS / "writing-plugins.md").read_text().split())
    assert "dsh-permissions' check runs before the `tryfirst` impl of a plugin whose" in guide
