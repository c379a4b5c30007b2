"""What the docs audit's permission tests share, imported as ``permissions_audit_support``:
one turn under the permissions plugin. Needs the plugin installed (mark the test
``@pytest.mark.plugins("permissions")``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh.testing import ScriptedModel, run_turn, scripted_harness, text, tool_calls


async def decision_events(
    workspace: Path, config: str, *calls: tuple[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The data of the `permission/decision` events of one turn in which the model makes
    ``calls``, with the permissions plugin alone and dsh.yml text ``config``."""
    import dsh_permissions

    model = ScriptedModel([tool_calls(*calls), text("done")])
    plugins = [("permissions", dsh_permissions)]
    async with scripted_harness(
        model, plugins=plugins, load_entry_points=False, config_text=config, workspace=workspace
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "go")
    return [e.data for e in events if e.type == "permission/decision"]
