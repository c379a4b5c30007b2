"""The path and mode corpus: rules x modes x file tool calls x expected decision
(behaviours 47 and 49).

The workspace (conftest ``layout``) holds ``src/``, ``.env``, ``innocent.txt -> .env``,
``link_out -> ../outside``, ``src/escape -> ../outside``, ``link_etc -> /etc`` and
``.git/``. ``read``/``fetch`` change nothing; ``write``, ``edit``, ``copy``, ``remove``,
``deploy`` and ``bash`` do. ``fetch`` and ``deploy`` declare no matchable argument.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.plugins("permissions")

FILES: dict[str, Any] = {
    "allow": ["write(src/**)", "edit(src/**)", "copy(src/**)", "remove(src/**)"],
    "ask": ["write(src/secrets/**)"],
    "deny": [
        "read(.env)",
        "read(**/*.pem)",
        "write(/etc/**)",
        "write(.git/**)",
        "copy(/etc/**)",
        "remove(/etc/**)",
    ],
}
NONE: dict[str, Any] = {}
#: rules about paths inside directories: a call naming the directory is covered too
DIRS: dict[str, Any] = {
    "deny": ["read(.env)", "read(src/secrets/**)"],
    "ask": ["write(src/config/**)"],
}

Row = tuple[str, dict[str, Any], str, str, dict[str, Any] | str, str]
CASES: list[Row] = [
    # id, rules, mode, tool, arguments, expected
    # -- reads: denied files stay denied however they are spelled -----------------------
    ("read-inside", FILES, "default", "read", {"path": "src/a.py"}, "allow"),
    ("read-env", FILES, "default", "read", {"path": ".env"}, "deny"),
    ("read-env-dotdot", FILES, "default", "read", {"path": "src/../.env"}, "deny"),
    ("read-env-dot-slash", FILES, "default", "read", {"path": "./.env"}, "deny"),
    ("read-env-absolute", FILES, "default", "read", {"path": "{ws}/.env"}, "deny"),
    ("read-env-double-slash", FILES, "default", "read", {"path": "src//..//.env"}, "deny"),
    ("read-env-via-symlink", FILES, "default", "read", {"path": "innocent.txt"}, "deny"),
    ("read-env-outside-and-back", FILES, "default", "read", {"path": "../ws/.env"}, "deny"),
    ("read-pem", FILES, "default", "read", {"path": "keys/server.pem"}, "deny"),
    ("read-pem-deep", FILES, "default", "read", {"path": "a/b/c/d.pem"}, "deny"),
    ("read-pem-top", FILES, "default", "read", {"path": "server.pem"}, "deny"),
    ("read-unruled", FILES, "default", "read", {"path": "README.md"}, "allow"),
    ("read-outside", FILES, "default", "read", {"path": "{outside}/secret.txt"}, "allow"),
    ("read-fullwidth-env", FILES, "default", "read", {"path": "\uff0eenv"}, "deny"),
    # -- writes: allowed under src only, /etc and .git denied ---------------------------
    ("write-src", FILES, "default", "write", {"path": "src/new.py"}, "allow"),
    ("write-src-roundabout", FILES, "default", "write", {"path": "src/../src/x.py"}, "allow"),
    ("write-src-absolute", FILES, "default", "write", {"path": "{ws}/src/x.py"}, "allow"),
    ("write-escape-dotdot", FILES, "default", "write", {"path": "src/../../outside/x"}, "ask"),
    ("write-parent", FILES, "default", "write", {"path": "../outside/x"}, "ask"),
    ("write-symlink-out", FILES, "default", "write", {"path": "link_out/x"}, "ask"),
    ("write-src-symlink-out", FILES, "default", "write", {"path": "src/escape/x.txt"}, "ask"),
    ("write-src-symlink-dotdot", FILES, "default", "write", {"path": "src/escape/../x"}, "ask"),
    ("write-etc", FILES, "default", "write", {"path": "/etc/passwd"}, "deny"),
    ("write-etc-dotdot", FILES, "default", "write", {"path": "/etc/../etc/passwd"}, "deny"),
    ("write-etc-dot", FILES, "default", "write", {"path": "/etc/./passwd"}, "deny"),
    ("write-etc-slashes", FILES, "default", "write", {"path": "//etc///passwd"}, "deny"),
    ("write-etc-itself", FILES, "default", "write", {"path": "/etc"}, "deny"),
    ("write-etc-via-symlink", FILES, "default", "write", {"path": "link_etc/passwd"}, "deny"),
    (
        "write-etc-via-dotdots",
        FILES,
        "default",
        "write",
        {"path": "src/" + "../" * 40 + "etc/passwd"},
        "deny",
    ),
    ("write-git", FILES, "default", "write", {"path": ".git/config"}, "deny"),
    ("write-git-roundabout", FILES, "default", "write", {"path": "src/../.git/hooks/x"}, "deny"),
    ("write-secrets-asks", FILES, "default", "write", {"path": "src/secrets/key"}, "ask"),
    ("write-home", FILES, "default", "write", {"path": "~/x"}, "ask"),
    ("write-home-var", FILES, "default", "write", {"path": "$HOME/x"}, "ask"),
    ("write-empty-path", FILES, "default", "write", {"path": ""}, "ask"),
    ("write-nul", FILES, "default", "write", {"path": "src/a.py\x00.txt"}, "ask"),
    ("write-very-long", FILES, "default", "write", {"path": "src/" + "a" * 5_000}, "ask"),
    ("write-cyrillic-etc", FILES, "default", "write", {"path": "/\u0435tc/passwd"}, "ask"),
    ("write-fullwidth-slash", FILES, "default", "write", {"path": "\uff0fetc\uff0fpasswd"}, "ask"),
    ("write-unruled", FILES, "default", "write", {"path": "notes.txt"}, "ask"),
    # -- several path arguments: every one must be allowed ------------------------------
    (
        "copy-inside",
        FILES,
        "default",
        "copy",
        {"source": "src/a.py", "target": "src/b.py"},
        "allow",
    ),
    ("copy-to-etc", FILES, "default", "copy", {"source": "src/a.py", "target": "/etc/x"}, "deny"),
    ("copy-out", FILES, "default", "copy", {"source": "src/a.py", "target": "link_out/x"}, "ask"),
    ("remove-inside", FILES, "default", "remove", {"paths": ["src/a.py", "src/b"]}, "allow"),
    ("remove-one-bad", FILES, "default", "remove", {"paths": ["src/a.py", "/etc/x"]}, "deny"),
    ("remove-one-out", FILES, "default", "remove", {"paths": ["src/a.py", "../x"]}, "ask"),
    ("remove-none", FILES, "default", "remove", {"paths": []}, "deny"),
    # -- arguments that cannot be read are refused --------------------------------------
    ("bad-json", FILES, "default", "write", "{not json", "deny"),
    ("missing-path", FILES, "default", "write", {"content": "x"}, "deny"),
    ("wrong-type", FILES, "default", "write", {"path": 7}, "deny"),
    ("json-list", FILES, "default", "write", "[1, 2]", "deny"),
    # -- a directory: the tool may read or change what is inside it --------------------
    ("dir-read-root", DIRS, "default", "read", {"path": "."}, "deny"),
    ("dir-read-root-slash", DIRS, "default", "read", {"path": "./"}, "deny"),
    ("dir-read-src", DIRS, "default", "read", {"path": "src"}, "deny"),
    ("dir-read-secrets", DIRS, "default", "read", {"path": "src/secrets"}, "deny"),
    ("dir-read-config", DIRS, "default", "read", {"path": "src/config"}, "allow"),
    ("dir-read-file", DIRS, "default", "read", {"path": "src/a.py"}, "allow"),
    ("dir-read-missing", DIRS, "default", "read", {"path": "src/nope"}, "allow"),
    ("dir-read-outside", DIRS, "default", "read", {"path": "link_out"}, "allow"),
    ("dir-edits-ask-inside", DIRS, "accept-edits", "write", {"path": "src"}, "ask"),
    ("dir-edits-file", DIRS, "accept-edits", "write", {"path": "src/b.py"}, "allow"),
    # -- modes ----------------------------------------------------------------------------
    ("plan-write", FILES, "plan", "write", {"path": "src/a.py"}, "deny"),
    ("plan-edit", NONE, "plan", "edit", {"path": "src/a.py"}, "deny"),
    ("plan-bash", NONE, "plan", "bash", {"command": "git status"}, "deny"),
    ("plan-deploy", NONE, "plan", "deploy", {}, "deny"),
    ("plan-unknown-tool", NONE, "plan", "nope", {}, "deny"),
    ("plan-bad-json", NONE, "plan", "write", "{oops", "deny"),
    ("plan-read", FILES, "plan", "read", {"path": "src/a.py"}, "allow"),
    ("plan-read-denied", FILES, "plan", "read", {"path": ".env"}, "deny"),
    ("plan-fetch", NONE, "plan", "fetch", {"url": "x"}, "allow"),
    ("edits-write-inside", NONE, "accept-edits", "write", {"path": "notes.txt"}, "allow"),
    ("edits-edit-inside", NONE, "accept-edits", "edit", {"path": "src/a.py"}, "allow"),
    ("edits-copy-inside", NONE, "accept-edits", "copy", {"source": "a", "target": "b"}, "allow"),
    ("edits-write-parent", NONE, "accept-edits", "write", {"path": "../outside/x"}, "ask"),
    ("edits-write-symlink", NONE, "accept-edits", "write", {"path": "link_out/x"}, "ask"),
    ("edits-write-src-symlink", NONE, "accept-edits", "write", {"path": "src/escape/x"}, "ask"),
    ("edits-write-absolute", NONE, "accept-edits", "write", {"path": "/tmp/x"}, "ask"),
    ("edits-write-home", NONE, "accept-edits", "write", {"path": "~/x"}, "ask"),
    ("edits-deny-wins", FILES, "accept-edits", "write", {"path": ".git/config"}, "deny"),
    ("edits-ask-wins", FILES, "accept-edits", "write", {"path": "src/secrets/k"}, "ask"),
    ("edits-bash-still-ruled", NONE, "accept-edits", "bash", {"command": "touch x"}, "ask"),
    ("edits-deploy", NONE, "accept-edits", "deploy", {}, "ask"),
    ("bypass-bash", FILES, "bypass", "bash", {"command": "rm -rf /"}, "allow"),
    ("bypass-write-etc", FILES, "bypass", "write", {"path": "/etc/passwd"}, "deny"),
    ("bypass-write-tmp", FILES, "bypass", "write", {"path": "/tmp/x"}, "allow"),
    ("bypass-ask-rule", FILES, "bypass", "write", {"path": "src/secrets/k"}, "allow"),
    ("bypass-read-denied", FILES, "bypass", "read", {"path": ".env"}, "deny"),
    ("bypass-bad-json-ruled", FILES, "bypass", "write", "{oops", "deny"),
    ("default-deploy", NONE, "default", "deploy", {}, "ask"),
    ("default-fetch", NONE, "default", "fetch", {"url": "x"}, "allow"),
    ("default-unknown-tool", NONE, "default", "nope", {}, "ask"),
    # -- rule forms ---------------------------------------------------------------------
    ("name-allows-all", {"allow": ["bash"]}, "default", "bash", {"command": "rm x"}, "allow"),
    ("name-denies-all", {"deny": ["bash"]}, "default", "bash", {"command": "ls"}, "deny"),
    (
        "name-never-allows-unparseable",
        {"allow": ["bash"]},
        "default",
        "bash",
        {"command": "cat <<EOF\nx\nEOF"},
        "ask",
    ),
    ("star-denies-all", {"deny": ["*"]}, "default", "read", {"path": "src/a.py"}, "deny"),
    ("prefix-star-allows", {"allow": ["mcp_*"]}, "default", "mcp_search", {}, "allow"),
    ("prefix-star-other", {"allow": ["mcp_*"]}, "default", "nope", {}, "ask"),
    ("undeclared-deny-pattern", {"deny": ["fetch(*evil*)"]}, "default", "fetch", {}, "deny"),
    ("undeclared-allow-pattern", {"allow": ["deploy(prod)"]}, "default", "deploy", {}, "ask"),
    ("deploy-by-name", {"allow": ["deploy"]}, "default", "deploy", {}, "allow"),
    (
        "ask-beats-allow",
        {"allow": ["bash(git *)"], "ask": ["bash(git push*)"]},
        "default",
        "bash",
        {"command": "git push"},
        "ask",
    ),
    (
        "deny-beats-ask",
        {"ask": ["bash(git push*)"], "deny": ["bash(git push --force*)"]},
        "default",
        "bash",
        {"command": "git push --force"},
        "deny",
    ),
    (
        "order-does-not-matter",
        {"deny": ["write(src/**)"], "allow": ["write(src/**)"]},
        "default",
        "write",
        {"path": "src/a.py"},
        "deny",
    ),
    ("home-pattern", {"deny": ["write(~/**)"]}, "default", "write", {"path": "~/x"}, "deny"),
    (
        "home-pattern-absolute",
        {"deny": ["write(~/**)"]},
        "default",
        "write",
        {"path": "{home}/x"},
        "deny",
    ),
    (
        "pattern-with-dotdot",
        {"deny": ["write(src/../.git/**)"]},
        "default",
        "write",
        {"path": ".git/config"},
        "deny",
    ),
    (
        "pattern-through-symlink",
        {"deny": ["write(link_etc/**)"]},
        "default",
        "write",
        {"path": "/etc/hosts"},
        "deny",
    ),
    (
        "single-star-one-level",
        {"allow": ["write(src/*)"]},
        "default",
        "write",
        {"path": "src/config/x"},
        "ask",
    ),
]


@pytest.mark.parametrize(
    ("rules", "mode", "tool", "arguments", "expected"),
    [pytest.param(r, m, t, a, e, id=i) for i, r, m, t, a, e in CASES],
)
async def test_b47_b49_path_and_mode_corpus(judge, rules, mode, tool, arguments, expected):
    judged = await judge(rules, tool, arguments, mode=mode)

    assert judged.decision == expected, judged.event["reason"]
    assert judged.event["mode"] == mode


def test_the_path_corpus_is_large_and_mostly_hostile():
    assert len(CASES) >= 80
    assert len({case[0] for case in CASES}) == len(CASES), "case ids must be unique"
    assert len([case for case in CASES if case[5] != "allow"]) >= 60


async def test_a_rule_about_a_path_inside_a_directory_says_so(judge):
    judged = await judge(DIRS, "read", {"path": "."})

    assert judged.decision == "deny" and judged.ran == []
    assert "read(.env)" in judged.event["reason"]
    assert "inside that directory" in judged.event["reason"]
    assert "narrower path" in judged.result.content
