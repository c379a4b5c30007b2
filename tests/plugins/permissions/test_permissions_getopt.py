"""Where two of the plugin's readers of one program's options disagreed, the stricter
reading is kept (``_getopt`` is the one getopt reader they share). Calls go through the
real dispatcher (conftest ``judge``; the layout has ``.env``)."""

from __future__ import annotations

import pytest

from dsh_permissions._getopt import END, OPERAND, scan

pytestmark = pytest.mark.plugins("permissions")

DENY_ENV = {"allow": ["bash(env *)", "bash(cat *)"], "deny": ["read(.env)"]}
BYPASS = {"deny": ["read(.env)"]}


@pytest.mark.parametrize("mode", ["default", "bypass"])
@pytest.mark.parametrize(
    "command",
    [
        "env -u NAME -S 'cat .env'",
        "env -u NAME -u OTHER --split-string='cat .env'",
        "env --unset NAME -S 'cat .env'",
        "env --uns NAME -S'cat .env'",
        "env -P /usr/bin -S 'cat .env'",
        "env -i -u NAME -S 'cat .env'",
    ],
)
async def test_env_s_after_an_option_given_its_value_apart_is_split(judge, command, mode):
    """Ran unasked in bypass mode (asked about in default mode): env's grammar
    (``_wrapper_grammar``) reads ``-u NAME`` as an option and its value, but
    ``split_string`` stopped at ``NAME`` (no option, assignment or number), so the
    string ``-S`` gives was not split and the read of ``.env`` not seen."""
    rules = DENY_ENV if mode == "default" else BYPASS
    judged = await judge(rules, "bash", {"command": command}, mode=mode)
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: read(.env)"


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["-xv", "a"], [("-x", None), ("-v", "a")]),
        (["-xvNAME", "b"], [("-x", None), ("-v", "NAME"), ("", None)]),
        (["--user", "root", "--", "-x"], [("--user", "root"), (END, None), (OPERAND, None)]),
        (["--us=root", "--no", "x"], [("--us", "root"), ("--no", None), ("", None)]),
        (["-v"], [("-v", None)]),
    ],
)
def test_scan_reads_as_getopt_does(words, expected):
    """A cluster up to its letter taking a value; long options shortened, with ``=`` or
    the next word; nothing but operands after ``--``."""
    got = [(r.option, r.value) for r in scan(words, 0, "v", ("--user",))]
    assert got == expected
