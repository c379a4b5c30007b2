"""Attacks on the files accept-edits keeps out (docs/permissions.md, "Files that run code
later"): names a file system folds to a guarded one. Each row leaked (the call ran
unasked) before the fix named in its test's docstring. Calls go through the real
dispatcher (conftest ``judge``).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.plugins("permissions")


@pytest.mark.parametrize(
    "path",
    [
        ".g\u200cit/config",  # HFS+ leaves U+200C out of names
        ".git./config",  # NTFS drops trailing dots
        ".git /hooks/pre-commit",  # and spaces
        ".git::$INDEX_ALLOCATION/config",  # an NTFS stream of the directory
        "GIT~1/config",  # NTFS short name
        "HG~1/hgrc",  # and .hg's (re-review of session 43, finding 4)
        ".envrc.",
        "src/.ENVRC ",
        "\uff0egit/config",  # look-alike full-width dot
    ],
)
async def test_accept_edits_asks_about_names_a_file_system_folds_to_a_guarded_one(judge, path):
    """Leaked: only case was folded; a file system that folds names in other ways (as
    git itself guards against: is_hfs_dotgit, is_ntfs_dotgit) has one ``.git`` for
    these too. docs/permissions.md, "Files that run code later"."""
    judged = await judge({}, "write", {"path": path}, mode="accept-edits")
    assert judged.decision == "ask", judged.event["reason"]
    assert "accept-edits does not cover" in judged.event["asked"], judged.event["asked"]


async def test_accept_edits_still_allows_ordinary_names(judge):
    judged = await judge({}, "write", {"path": "src/git.py"}, mode="accept-edits")
    assert judged.decision == "allow", judged.event["reason"]
