"""A watched variable (``SHELL``, the shell parallel runs its commands with; ``HOME``,
where git finds its configuration and ``~`` is) counts only when the line sets it
(behaviour 49: a command must not be smuggled past a rule): one only read
(``echo $SHELL``, ``X=$SHELL``, ``cd $HOME``) is not set, and leaves what follows known;
one set by an assignment, ``export``, ``${X:=...}``, a nameref, arithmetic or ``read``
still counts.
Each row goes through the real dispatcher (conftest ``judge``); nothing is run.
"""

from __future__ import annotations

import pytest
from permissions_util import BYPASS_PASSWD, BYPASS_RM, allowed, refused

pytestmark = pytest.mark.plugins("permissions")

READ_DENIED = {"allow": ["bash"], "deny": ["read(.env)"]}


@pytest.mark.parametrize(
    "command",
    [
        "export PATH=$HOME/bin:$PATH; parallel echo ::: x",
        "echo $SHELL; parallel echo ::: x", 'echo "${SHELL}"; parallel echo ::: x',
        "cd $HOME && git status", "X=$SHELL; parallel echo ::: x", "cd $HOME && ssh host ls",
    ],
)  # fmt: skip
async def test_a_watched_variable_only_read_is_not_set(judge, command):
    await allowed(judge, READ_DENIED, command)


@pytest.mark.parametrize("command", ["h=$HOME; cat ~/passwd", "echo ${HOME}; cat ~/passwd"])
async def test_home_only_read_leaves_tilde_known(judge, command):
    await allowed(judge, BYPASS_PASSWD, command, mode="bypass")


@pytest.mark.parametrize(
    "command",
    [
        "echo ${SHELL:=x}; parallel echo ::: x", "export SHELL=x; parallel echo ::: x",
        "declare -n r=SHELL; r=x; parallel echo ::: x", "export HOME; HOME=. git status",
        ": $((SHELL=1)); parallel echo ::: x", "read SHELL; parallel echo ::: x",
    ],
)  # fmt: skip
async def test_b49_a_watched_variable_set_still_counts(judge, command):
    await refused(judge, BYPASS_RM, command, mode="bypass")
