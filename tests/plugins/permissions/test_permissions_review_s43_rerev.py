"""Re-review of the permissions plugin (s43): a deny pattern with a wildcard before a
symlinked directory, the split budget of a whole call, backslashes in rule patterns,
and the NTFS short name of ``.hg``."""

from __future__ import annotations

from typing import Any

import pytest
from permissions_util import Layout

pytestmark = pytest.mark.plugins("permissions")


@pytest.fixture
def vault(layout: Layout) -> Layout:
    """``ws/secrets`` and ``ws/x/keys`` lead to ``vault``, outside the workspace."""
    (layout.root / "vault").mkdir()
    (layout.root / "vault" / "k").write_text("k\n")
    (layout.ws / "secrets").symlink_to(layout.root / "vault")
    (layout.ws / "x").mkdir()
    (layout.ws / "x" / "keys").symlink_to("../../vault")
    return layout


@pytest.mark.parametrize(
    ("rule", "path"),
    [
        ("read(**/secrets/**)", "secrets/k"),
        ("read(secrets/**)", "secrets/k"),
        ("read(*/keys/**)", "x/keys/k"),
        ("read(**/keys/**)", "x/keys/k"),
        ("read(**/keys/**)", "./x/../x/keys/k"),
    ],
)
@pytest.mark.parametrize("tool", ["read", "bash"])
async def test_a_wildcard_deny_rule_sees_a_symlinked_directory_by_its_name(
    judge: Any, vault: Layout, rule: str, path: str, tool: str
) -> None:
    arguments = {"path": path} if tool == "read" else {"command": f"cat {path}"}
    judged = await judge({"deny": [rule], "allow": ["bash", "read"]}, tool, arguments)
    assert judged.decision == "deny", judged.event["reason"]


async def test_an_allow_rule_is_not_widened_by_the_name(judge: Any, vault: Layout) -> None:
    # the name as written is a deny reading only: write(**/secrets/**) does not reach vault
    arguments = {"path": "secrets/k", "content": "x"}
    judged = await judge({"allow": ["write(**/secrets/**)"]}, "write", arguments)
    assert judged.decision == "ask", judged.event["reason"]
