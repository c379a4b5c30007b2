"""A deny rule for a workspace script also sees it run through a shell, ``source`` or
an assigned ``PATH`` (permission re-review of session 32, D2).

docs/permissions.md advises ``./`` in script rules; under ``allow: bash(*)`` the rule
``deny: bash(./deploy.sh *)`` missed ``bash deploy.sh prod``, ``sh ./deploy.sh``,
``. ./deploy.sh``, ``source deploy.sh`` and ``PATH=. deploy.sh``: each runs the
script. Deny and ask rules now also read such a command as the script run as a
program (``_readings.script_runs``). Rows go through the real dispatcher (conftest
``judge``).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.plugins("permissions")


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("./deploy.sh *", "bash deploy.sh prod"),
        ("./deploy.sh *", "bash ./deploy.sh prod"),
        ("./deploy.sh *", "sh -e ./deploy.sh prod"),
        ("./deploy.sh *", ". ./deploy.sh prod"),
        ("./deploy.sh *", "source deploy.sh prod"),
        ("./deploy.sh *", "PATH=. deploy.sh prod"),
        ("./deploy.sh *", "sudo bash deploy.sh prod"),
        ("./scripts/deploy.sh *", "bash scripts/deploy.sh prod"),
        ("./scripts/deploy.sh *", "cd scripts; bash deploy.sh prod"),
        ("deploy.sh *", "bash scripts/deploy.sh prod"),  # its bare name, as ./ gives
        # the shell's options read by _shell_args: a value (-o NAME, --rcfile FILE, fish
        # -d 3) is not the script, nor is bash's -verbose / -posix -v / -c / -s
        ("./deploy.sh *", "bash -o posix deploy.sh prod"),
        ("./deploy.sh *", "bash -euxo pipefail deploy.sh prod"),
        ("./deploy.sh *", "bash +O extglob deploy.sh prod"),
        ("./deploy.sh *", "bash --rcfile x deploy.sh prod"),
        ("./deploy.sh *", "bash -rcfile x deploy.sh prod"),
        ("./deploy.sh *", "bash -verbose deploy.sh prod"),
        ("./deploy.sh *", "bash -posix deploy.sh prod"),
        ("./deploy.sh *", "fish -d 3 deploy.sh prod"),
        ("./deploy.sh *", "zsh -oextendedglob deploy.sh prod"),  # not known: still seen
    ],
)
async def test_a_script_rule_sees_the_script_run_by_a_shell(judge, layout, rule, command):
    for path in ("deploy.sh", "scripts/deploy.sh"):
        (layout.ws / path).parent.mkdir(exist_ok=True)
        (layout.ws / path).write_text("#!/bin/sh\necho deployed\n")
    judged = await judge(
        {"allow": ["bash(*)"], "deny": [f"bash({rule})"]}, "bash", {"command": command}
    )
    assert judged.decision == "deny", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'echo deploy.sh prod'",  # -c: its operand is code, not a script
        "bash -x -rcfile 'echo deploy.sh prod'",  # -r -c -f ...: -c again
        "bash build.sh prod",
        "source other.sh",
    ],
)
async def test_other_scripts_stay_allowed(judge, command):
    judged = await judge(
        {"allow": ["bash(*)"], "deny": ["bash(./deploy.sh *)"]}, "bash", {"command": command}
    )
    assert judged.decision == "allow", judged.event["reason"]
