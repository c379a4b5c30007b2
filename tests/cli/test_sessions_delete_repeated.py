"""``dsh sessions delete ID ID``: an id given twice is one session to delete, deleted
once and said once, not then "no stored session" with status 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import dsh, stored_session, text_reply

# they store a session first: dsh-persistence must be installed and loaded
pytestmark = pytest.mark.plugins("persistence")


def test_an_id_given_twice_is_deleted_once(
    model_server: Any, cli_env: dict[str, str], tmp_path: Path
) -> None:
    server = model_server([text_reply("One."), text_reply("Two.")])
    first = stored_session(server, cli_env, tmp_path)
    second = stored_session(server, cli_env, tmp_path)
    done = dsh("sessions", "delete", first, second, first, env=cli_env, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"deleted {first}\ndeleted {second}\n"
