"""Rule syntax and the two pattern languages (command text and canonical paths)."""

from __future__ import annotations

import os
import time

import pytest

from dsh_permissions._paths import PathPattern, display, inside, path_readings
from dsh_permissions._rules import TextPattern, parse_rule

pytestmark = pytest.mark.plugins("permissions")


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("bash", ("bash", None)),
        ("bash(git status*)", ("bash", "git status*")),
        ("  read( src/** ) ", ("read", "src/**")),
        ("mcp_*", ("mcp_*", None)),
        ("server.tool-x:y", ("server.tool-x:y", None)),
        ("bash(echo (nested))", ("bash", "echo (nested)")),
    ],
)
def test_rules_parse(text, parsed):
    assert parse_rule(text) == parsed


@pytest.mark.parametrize("text", ["", "two words", "bash(", "bash()", "bash(x", "(x)", "a b(c)"])
def test_malformed_rules_are_refused(text):
    with pytest.raises(ValueError, match=r"rule|pattern"):
        parse_rule(text)


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("git status", "git status", True),
        ("git status", "git status -s", False),
        ("git status*", "git status -s", True),
        ("git status*", "git statusx", True),
        ("git status *", "git status", True),
        ("rm *", "rm", True),
        ("rm *", "rmdir x", False),
        ("rm *", "rm -rf /", True),
        ("*", "", True),
        ("* --force", "git push --force", True),
        ("* --force", "git push --force-with-lease", False),
        ("git  *", "git log", True),
        ("a?b", "a?b", True),
        ("a?b", "axb", False),
        ("a[b]c", "a[b]c", True),
        ("echo *", "echo a\nb", True),
        ("> /etc/*", "> /etc/passwd", True),
    ],
)
def test_command_patterns(pattern, text, matches):
    assert TextPattern.compile(pattern).matches(text) is matches


def test_command_patterns_do_not_backtrack_badly():
    pattern = TextPattern.compile("*a*a*a*a*a*a*a*b")
    started = time.perf_counter()
    assert not pattern.matches("a" * 60_000)
    # a guard against catastrophic backtracking (minutes), not a speed target: linear
    # matching takes milliseconds, so a loaded machine stays far below the bound
    assert time.perf_counter() - started < 10.0


@pytest.fixture
def root(tmp_path):
    path = tmp_path.resolve() / "ws"
    (path / "src" / "deep").mkdir(parents=True)
    (path / "link").symlink_to(tmp_path.resolve() / "elsewhere")
    return str(path)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("src/**", "src", True),
        ("src/**", "src/a", True),
        ("src/**", "src/deep/er/a.py", True),
        ("src/**", "srcx/a", False),
        ("src/*", "src/a", True),
        ("src/*", "src/deep/a", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/a.pyc", False),
        ("**/*.pem", "a.pem", True),
        ("**/*.pem", "a/b/c.pem", True),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/a.py", False),
        ("src/[ab].py", "src/a.py", True),
        ("src/[ab].py", "src/c.py", False),
        ("**", "anything/at/all", True),
        (".env", ".env", True),
        (".env", "src/.env", False),
        ("src/../.env", ".env", True),
    ],
)
def test_path_patterns_are_anchored_at_the_workspace(root, pattern, path, matches):
    compiled = PathPattern.compile(pattern, root)

    assert compiled.matches(os.path.join(root, path)) is matches


def test_absolute_and_home_patterns(root):
    home = os.path.realpath(os.path.expanduser("~"))

    assert PathPattern.compile("/etc/**", root).matches(os.path.realpath("/etc") + "/hosts")
    assert PathPattern.compile("~/**", root).matches(home + "/.ssh/id_rsa")
    assert not PathPattern.compile("~/**", root).matches(root + "/x")


def test_a_pattern_through_a_symlink_matches_the_target(root, tmp_path):
    pattern = PathPattern.compile("link/**", root)
    target = str(tmp_path.resolve() / "elsewhere" / "x")

    # either form, as written or resolved, for deny and ask rules
    assert pattern.matches(target)
    assert pattern.matches(os.path.join(root, "link", "x"))
    assert not pattern.matches(os.path.join(root, "other", "x"))
    # both forms, for allow rules: through a symlink an allow pattern matches nothing
    assert not pattern.matches(target, every=True)
    assert PathPattern.compile("src/**", root).matches(os.path.join(root, "src", "x"), every=True)


def test_path_matching_stays_fast_on_deep_paths(root):
    pattern = PathPattern.compile("**/a/**/b/**/c/**/d.txt", root)
    deep = os.path.join(root, *(["x"] * 2000))
    started = time.perf_counter()
    assert not pattern.matches(deep)
    assert time.perf_counter() - started < 10.0  # exponential would take minutes


def test_path_readings(root, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path.resolve() / "home"))
    home = str(tmp_path.resolve() / "home")

    assert path_readings("src/../src/a", root) == (root + "/src/a",)
    assert path_readings("link/x", root) == (str(tmp_path.resolve() / "elsewhere" / "x"),)
    assert path_readings("~/x", root) == (root + "/~/x", home + "/x")
    assert path_readings("$HOME/x", root) == (root + "/$HOME/x", home + "/x")
    for bad in ("", "a\x00b", "a" * 5000):
        with pytest.raises(ValueError, match="path"):
            path_readings(bad, root)


def test_inside_and_display(root):
    assert inside(root, root) and inside(root + "/a", root)
    assert not inside(root + "x/a", root)
    assert display(root, root) == "."
    assert display(root + "/src/a", root) == "src/a"
    assert display("/etc/passwd", root) == "/etc/passwd"
    assert inside("/anything", "/")
