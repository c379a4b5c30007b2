"""The shell splitter on its own: what it returns, what it refuses, and that it stays
fast on hostile input."""

from __future__ import annotations

import contextlib
import time

import pytest

from dsh_permissions._shell import Unparseable, split

pytestmark = pytest.mark.plugins("permissions")


def texts(line: str) -> list[list[str]]:
    return [[w.text for w in command.words] for command in split(line)]


@pytest.mark.parametrize(
    ("line", "commands"),
    [
        ("git status", [["git", "status"]]),
        (
            "a; b && c || d | e |& f & g\nh",
            [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"], ["h"]],
        ),
        ("echo 'a b' \"c d\" e\\ f", [["echo", "a b", "c d", "e f"]]),
        ("echo $(rm x) y", [["rm", "x"], ["echo", "$(rm x)", "y"]]),
        ("echo `rm \\`x\\``", [["x"], ["rm", "`x`"], ["echo", "`rm \\`x\\``"]]),
        ("(a; b) && c", [["a"], ["b"], ["c"]]),
        ("X=1 Y=2 make", [["X=1", "Y=2", "make"]]),
        ("echo a#b # c; d", [["echo", "a#b"]]),
        ("! grep x", [["grep", "x"]]),
        ("", []),
        ("   # only a comment", []),
        ("a &&\n\n  b", [["a"], ["b"]]),
        ("cat < <(ls)", [["ls"], ["cat"]]),
        ('echo "$(a "$(b)")"', [["b"], ["a", "$(b)"], ["echo", '$(a "$(b)")']]),
    ],
)
def test_splits_into_simple_commands(line, commands):
    assert texts(line) == commands


def test_dynamic_words_are_marked():
    [command] = split("cmd $HOME ${X} *.py {a,b} ~root ~/x 'lit*' \"$Y\" plain")

    dynamic = {w.raw: w.dynamic for w in command.words}

    assert dynamic == {
        "cmd": False,
        "$HOME": True,
        "${X}": True,
        "*.py": True,
        "{a,b}": True,
        "~root": True,
        "~/x": False,
        "'lit*'": False,
        '"$Y"': True,
        "plain": False,
    }
    assert [w.tilde for w in command.words if w.raw.startswith("~")] == [False, True]


def test_redirections_are_classified():
    [command] = split("cmd <in 2>err >>log &>all 2>&1 >&- <<<word")

    kinds = [(r.kind, r.target.text) for r in command.redirects]

    assert kinds == [
        ("<", "in"),
        (">", "err"),
        (">", "log"),
        (">", "all"),
        ("dup", "1"),
        ("dup", "-"),
        ("<<<", "word"),
    ]
    assert [w.text for w in command.words] == ["cmd"]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("cat <<EOF\nx\nEOF", "here-documents"),
        ("if x; then y; fi", "keyword 'if'"),
        ("while x; do y; done", "keyword 'while'"),
        ("{ a; }", "keyword '{'"),
        ("[[ -f x ]]", "keyword '[['"),
        ("f() { a; }", "'(' inside a command"),
        ("a=(1 2)", "'(' inside a command"),
        ("echo $((1 + 2))", "arithmetic"),
        ("((x++))", "arithmetic"),
        ("a )", "a ')' closes nothing"),
        ("case x in y) z;; esac", "keyword 'case'"),
        ("a ;; b", "case"),
        ("echo 'open", "single quote"),
        ('echo "open', "double quote"),
        ("echo `open", "backtick"),
        ("echo $(open", "never closed"),
        ("echo ${open", "never closed"),
        ("echo ${X:-$(rm)}", "${...}"),
        ("a |", "ends with an operator"),
        ("| a", "no command before it"),
        ("a && ; b", "no command between"),
        ("(a) b", "follows a ')' group"),
        ("cmd >", "no target"),
        ("x\ry", "U+000D"),
        ("x\u202ey", "U+202E"),
        ("x\u200by", "U+200B"),
        ("x\x00y", "U+0000"),
    ],
)
def test_refuses_what_it_does_not_model(line, reason):
    with pytest.raises(Unparseable, match=None) as caught:
        split(line)

    assert reason in str(caught.value)


def test_refuses_too_long_too_deep_and_too_many():
    with pytest.raises(Unparseable, match="longer than"):
        split("a" * 70_000)
    with pytest.raises(Unparseable, match="nested more than"):
        split("$(" * 20 + "x" + ")" * 20)
    with pytest.raises(Unparseable, match="more than 256 commands"):
        split("a;" * 300)


@pytest.mark.parametrize(
    "line",
    [
        "a" * 65_000,
        "'" + "a" * 64_000 + "'",
        "$(" * 16 + "x" + ")" * 16,
        "a " * 30_000,
        '"' + "\\$" * 30_000 + '"',
        "a;" * 250 + "b" * 60_000,
    ],
    ids=["one-word", "quoted", "nested", "many-words", "escapes", "commands"],
)
def test_hostile_sizes_are_handled_quickly(line):
    # Not a speed target: a guard against quadratic (or worse) splitting, which on these
    # 30-65 KB lines takes minutes where linear work takes milliseconds; the bound is
    # a thousand times the expected time, so a loaded machine does not fail it.
    started = time.perf_counter()
    with contextlib.suppress(Unparseable):
        split(line)
    assert time.perf_counter() - started < 10.0
