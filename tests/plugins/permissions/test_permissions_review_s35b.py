"""Findings F4-F7 of the permissions review of session 35 (permrev3), each of which ran
unasked before its fix.

F4: with ``POSIXLY_CORRECT`` in its environment (set to anything, empty too) GNU getopt
stops at a program's first operand, so a later ``-n .env`` is two files. It may be set
before the command, exported earlier in the line, or inherited (the bash tool passes
dsh's environment on): every word after the first operand is then a file too
(``_option_variables``, ``_reader_args``). F5: ``toybox`` runs its applets as
``busybox`` does. F6: accept-edits asks about anything in a ``site-packages`` /
``dist-packages`` directory and in the ``bin`` / ``Scripts`` directory of a venv (one
holding ``pyvenv.cfg``): they run the next time Python or a venv's program starts.
F7: more plain printers are readers (``unexpand``, ``uuencode``, ``lz4``, ``ptx``,
``tsort``, ``look``, ``m4``, ``cpp``, the checksums, ``wc``). Calls go through the real
dispatcher (conftest ``judge``; the layout has ``.env`` and ``src/a.py``).
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_RM, DENY_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

ENV = {"deny": ["read(.env)"]}
ENV_ALLOW = {**ENV, "allow": ["bash"]}


async def refused_both(judge, rules, command):
    """Refused in bypass mode (deny rules only) and in default mode under ``rules``."""
    await refused(judge, ENV, command, mode="bypass")
    await refused(judge, rules, command)


@pytest.mark.parametrize(
    "command",
    [
        "POSIXLY_CORRECT=1 head x -n .env",
        "POSIXLY_CORRECT= head x -n .env",  # set, though empty
        "POSIXLY_CORRECT=1 grep -h SEC x -e .env",
        "POSIXLY_CORRECT=1 cut -c1- x -d .env",
        "POSIXLY_CORRECT=1 sort x -o .env",
        "POSIXLY_CORRECT=1 sort x -t .env",
        "POSIXLY_CORRECT=1 cp x -t .env y",  # -t is a source after x: .env is read
        "env POSIXLY_CORRECT=1 head x -n .env",
        "sudo POSIXLY_CORRECT=1 tail x -n .env",
        "export POSIXLY_CORRECT=1; tail x -n .env",
        "export POSIXLY_CORRECT; head x -n .env",
        "declare -x POSIXLY_CORRECT=1 && head x -n .env",
        "set -a; POSIXLY_CORRECT=1; head x -n .env",
        "export $v; head x -n .env",
        ". ./vars.sh; head x -n .env",
        "POSIXLY_CORRECT=1 sh -c 'head x -n .env'",
        "POSIXLY_CORRECT=1 xargs head x -n .env",
    ],
)
async def test_f4_posixly_correct_makes_later_options_files(judge, command):
    await refused_both(judge, ENV_ALLOW, command)


@pytest.mark.parametrize(
    "command",
    ["head x -n .env", "grep -h SEC x -e .env", "sort x -o .env", "cut -c1- x -d .env"],
)
async def test_f4_an_inherited_posixly_correct_counts(judge, monkeypatch, command):
    """The bash tool runs commands with dsh's own environment: one set there (empty
    too) reaches the program."""
    monkeypatch.setenv("POSIXLY_CORRECT", "")
    await refused_both(judge, ENV_ALLOW, command)


@pytest.mark.parametrize(
    "command",
    [
        "head x -n .env",  # without it, getopt permutes: -n .env is a count
        "POSIXLY_CORRECT=1 head -n 5 src/a.py",
        "POSIXLY_CORRECT=1 grep -e .env src/a.py",  # the pattern, before any operand
        "export POSIXLY_CORRECT=1; head -n 5 src/a.py",
    ],
)
async def test_f4_options_before_the_first_operand_are_still_options(judge, monkeypatch, command):
    monkeypatch.delenv("POSIXLY_CORRECT", raising=False)
    await allowed(judge, ENV_ALLOW, command)


@pytest.mark.parametrize(
    "command",
    ["toybox rm -rf x", "toybox sh -c 'rm -rf x'", "toybox timeout 1 rm x", "toybox xargs rm"],
)
async def test_f5_toybox_runs_its_applets_as_busybox_does(judge, command):
    await refused(judge, DENY_RM, command)
    await refused(judge, BYPASS_RM, command, mode="bypass")


@pytest.mark.parametrize(
    "command", ["toybox cat .env", "toybox head .env", "toybox base64 .env", "toybox sh .env"]
)
async def test_f5_toybox_s_readers_are_readers(judge, command):
    await refused_both(judge, ENV_ALLOW, command)


VENV = ".venv/lib/python3.12/site-packages"


@pytest.mark.parametrize(
    "path",
    [
        f"{VENV}/evil-1.0.dist-info/entry_points.txt",
        f"{VENV}/dsh_permissions/_decide.py",
        f"{VENV}/new_module.py",
        ".venv/Lib/site-packages/pkg/__init__.py",
        "py/lib/python3/dist-packages/pkg/x.py",  # no venv needed: any such directory
        ".venv/bin/pytest",
        ".venv/bin/python3",
        ".venv/BIN/pip",
    ],
)
@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_f6_a_venv_s_packages_and_programs_are_asked_about(judge, layout, tool, path):
    (layout.ws / VENV).mkdir(parents=True)
    (layout.ws / ".venv" / "bin").mkdir()
    (layout.ws / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    judged = await judge({}, tool, {"path": path}, mode="accept-edits")
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize("path", ["bin/tool.sh", "tools/bin/run", "src/site_packages.py"])
async def test_f6_a_bin_directory_outside_a_venv_is_still_edited(judge, layout, path):
    judged = await judge({}, "write", {"path": path}, mode="accept-edits")
    assert judged.decision == "allow", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "unexpand .env", "uuencode .env x", "lz4 -c .env", "lz4cat .env", "unlz4 -c .env",
        "ptx .env", "tsort .env", "look a .env", "m4 .env", "cpp .env", "sum .env",
        "cksum .env", "b2sum .env", "md5sum .env", "sha1sum .env", "sha256sum .env",
        "sha512sum .env", "shasum .env", "wc .env", "wc --files0-from=list",
    ],
)  # fmt: skip
async def test_f7_more_plain_printers_are_readers(judge, command):
    await refused_both(judge, ENV_ALLOW, command)


@pytest.mark.parametrize("command", ["wc -l src/a.py", "md5sum src/a.py", "look a src/a.py"])
async def test_f7_their_other_files_are_still_read(judge, command):
    await allowed(judge, ENV_ALLOW, command)
