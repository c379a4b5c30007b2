"""Fail closed, case by case: what a hand mutation review of the plugin (183 mutations of
its decision, rule, path and command code) found no test for, as a table of scenarios.
Each case fails with at least one of the surviving mutations applied. The rows under
"failed open" were real bugs of the unmutated code: a denied command ran behind a
wrapper option that takes a value, a quoted ``-exec``, ``builtin cd``, or, in bypass
mode, a command that cannot be checked.
"""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.plugins("permissions")

HOME = os.path.expanduser("~")


OPEN = {"allow": ["bash(*)"], "deny": ["bash(rm *)", "bash(> /etc/*)"]}


OPEN_ENV = {
    "allow": ["bash(*)"],
    "deny": ["bash(cat .env)", "bash(cat ~/.ssh/*)", "bash(> ~/.bashrc)"],
}


FILES_BYPASS = {"deny": ["write(/etc/**)", "write(.git/**)"]}


CASES = [
    # id, rules, mode, tool, arguments, expected
    (
        "D23-D24-allow-every-reading",
        {"allow": ["write(**)"]},
        "default",
        "write",
        {"path": "~/.bashrc"},
        "ask",
    ),
    (
        "D27-bypass-second-deny-rule",
        FILES_BYPASS,
        "bypass",
        "write",
        {"path": ".git/config"},
        "deny",
    ),
    ("R7-tool-name-exact", {"allow": ["deploy"]}, "default", "deploy_prod", {}, "ask"),
    ("PA15-pattern-tilde-alone", {"deny": ["read(~)"]}, "default", "read", {"path": HOME}, "deny"),
    (
        "PA17-case-sensitive",
        {"allow": ["write(src/**)"]},
        "default",
        "write",
        {"path": "SRC/x"},
        "ask",
    ),
    (
        "S5-D31-home-dir-covered",
        {"deny": ["read(~/.ssh/**)"]},
        "default",
        "read",
        {"path": "~"},
        "deny",
    ),
    ("C4-bad-json-no-rules", {}, "default", "write", "{not json", "deny"),
    (
        "K5-raw-spelling-command",
        OPEN_ENV,
        "default",
        "bash",
        {"command": "cat ~/.ssh/id_rsa"},
        "deny",
    ),
    (
        "K28-raw-spelling-redirect",
        OPEN_ENV,
        "default",
        "bash",
        {"command": "echo x >> ~/.bashrc"},
        "deny",
    ),
    ("K9-K10-dynamic-input-redirect", OPEN, "default", "bash", {"command": "cat < $F"}, "ask"),
    (
        "K12-wrapped-must-be-allowed",
        {"allow": ["bash(timeout *)"]},
        "default",
        "bash",
        {"command": "timeout 5 make deploy"},
        "ask",
    ),
    (
        "K14-wrapper-then-shell-chain",
        OPEN,
        "default",
        "bash",
        {"command": "sudo bash -c 'true; rm -rf /'"},
        "deny",
    ),
    (
        "K18-sh-c-dashdash",
        OPEN,
        "default",
        "bash",
        {"command": "bash -c -- 'true; rm -rf /'"},
        "deny",
    ),
    (
        "K22-find-two-execs",
        OPEN,
        "default",
        "bash",
        {"command": "find . -exec true {} + -exec rm -rf {} +"},
        "deny",
    ),
    (
        "K24-K36-pushd-moves",
        {"allow": ["bash(pushd *)", "bash(cat src/*)"]},
        "default",
        "bash",
        {"command": "pushd / && cat src/a.py"},
        "ask",
    ),
    (
        "K25-tilde-canonical",
        {"allow": ["bash(*)"], "deny": [f"bash(cat {HOME}/.ssh/*)"]},
        "default",
        "bash",
        {"command": "cat ~/.ssh/id_rsa"},
        "deny",
    ),
    ("K31-append-assignment", OPEN, "default", "bash", {"command": "X+=1 rm -rf /"}, "deny"),
    (
        "K32-nice-n-5-shell",
        OPEN,
        "default",
        "bash",
        {"command": "nice -n 5 bash -c 'true; rm -rf /'"},
        "deny",
    ),
    (
        "K33-assignment-then-shell",
        OPEN,
        "default",
        "bash",
        {"command": "FOO=1 bash -c 'true; rm -rf /'"},
        "deny",
    ),
    (
        "K34-abs-sudo-with-user",
        OPEN,
        "default",
        "bash",
        {"command": "/usr/bin/sudo -u root rm -rf /"},
        "deny",
    ),
    ("K35-abs-shell", OPEN, "default", "bash", {"command": "/bin/sh -c 'true; rm -rf /'"}, "deny"),
    ("K39-nesting-limit", OPEN, "default", "bash", {"command": "eval " * 20 + "true"}, "ask"),
    ("K41-dynamic-here-string", OPEN, "default", "bash", {"command": 'bash <<< "$PAYLOAD"'}, "ask"),
    ("K43-zsh-c", OPEN, "default", "bash", {"command": "zsh -c 'true; rm -rf /'"}, "deny"),
    ("K45-eval-all-args", OPEN, "default", "bash", {"command": "eval 'true;' rm -rf /"}, "deny"),
    ("H6-question-glob", OPEN_ENV, "default", "bash", {"command": "cat ?env"}, "ask"),
    ("H8-bracket-glob", OPEN_ENV, "default", "bash", {"command": "cat [.]env"}, "ask"),
    (
        "H10-backticks-in-dq",
        {"allow": ["bash(cat src/*)", "bash(echo *)"]},
        "default",
        "bash",
        {"command": 'cat "src/`echo ../../etc/passwd`"'},
        "ask",
    ),
    (
        "H11-backticks-bare",
        {"allow": ["bash(cat src/*)", "bash(echo *)"]},
        "default",
        "bash",
        {"command": "cat src/`echo ../../etc/passwd`"},
        "ask",
    ),
    ("H13-special-parameter", OPEN, "default", "bash", {"command": "$0 -c 'rm -rf /'"}, "ask"),
    (
        "H14-redirect-and-file",
        OPEN,
        "default",
        "bash",
        {"command": "echo x >& /etc/passwd"},
        "deny",
    ),
    (
        "H15-read-write-redirect",
        OPEN,
        "default",
        "bash",
        {"command": "echo x <> /etc/passwd"},
        "deny",
    ),
    (
        "H17-word-glued-to-redirect",
        OPEN,
        "default",
        "bash",
        {"command": "rm>out.txt -rf build"},
        "deny",
    ),
    ("H29-line-continuation-in-word", OPEN, "default", "bash", {"command": "r\\\nm -rf /"}, "deny"),
    # -- these failed open -------------------------------------------------------
    (
        "BUG1-sudo-u-then-sh-c",
        OPEN,
        "default",
        "bash",
        {"command": "sudo -u root bash -c 'true; rm -rf /'"},
        "deny",
    ),
    (
        "BUG1-timeout-s-then-sh-c",
        OPEN,
        "default",
        "bash",
        {"command": "timeout -s KILL 5 sh -c 'true && rm -rf /'"},
        "deny",
    ),
    (
        "BUG1-env-u-then-eval",
        OPEN,
        "default",
        "bash",
        {"command": "env -u FOO eval 'true; rm -rf /'"},
        "deny",
    ),
    (
        "BUG2-quoted-exec",
        OPEN,
        "default",
        "bash",
        {"command": "find . '-exec' rm -rf {} +"},
        "deny",
    ),
    (
        "BUG2-escaped-exec",
        OPEN,
        "default",
        "bash",
        {"command": "find . \\-exec rm -rf {} +"},
        "deny",
    ),
    (
        "BUG3-builtin-cd",
        {"allow": ["bash(*)"], "deny": ["bash(cat .env)"]},
        "default",
        "bash",
        {"command": "builtin cd src && cat ../.env"},
        "deny",  # followed: ../.env from src is .env
    ),
    (
        "BUG3-command-cd",
        {"allow": ["bash(*)"], "deny": ["bash(cat .env)"]},
        "default",
        "bash",
        {"command": "command cd src && cat ../.env"},
        "deny",  # followed: ../.env from src is .env
    ),
    (
        "BUG1-doas-u-then-sh-c",
        OPEN,
        "default",
        "bash",
        {"command": "doas -u root sh -c 'true; rm -rf /'"},
        "deny",
    ),
    (
        "BUG1-exec-a-then-bash-c",
        OPEN,
        "default",
        "bash",
        {"command": "exec -a x bash -c 'true; rm -rf /'"},
        "deny",
    ),
    (
        "BUG4-bypass-unparseable",
        {"deny": ["bash(rm *)"]},
        "bypass",
        "bash",
        {"command": "if true; then rm -rf /; fi"},
        "deny",
    ),
    (
        "BUG4-bypass-dynamic",
        {"deny": ["bash(cat .env)"]},
        "bypass",
        "bash",
        {"command": "cat $F"},
        "deny",
    ),
    (
        "BUG-bypass-sudo-u",
        {"deny": ["bash(rm *)"]},
        "bypass",
        "bash",
        {"command": "sudo -u root bash -c 'true; rm -rf /'"},
        "deny",
    ),
    (
        "BUG-bypass-quoted-exec",
        {"deny": ["bash(rm *)"]},
        "bypass",
        "bash",
        {"command": "find . '-exec' rm -rf {} +"},
        "deny",
    ),
    # and what stays as it was
    (
        "bypass-plain-command-runs",
        {"deny": ["bash(rm *)"]},
        "bypass",
        "bash",
        {"command": "ls -la"},
        "allow",
    ),
    ("bypass-dynamic-without-deny-rules", {}, "bypass", "bash", {"command": "cat $F"}, "allow"),
    (
        "sudo-u-harmless-shell-script",
        OPEN,
        "default",
        "bash",
        {"command": "sudo -u root bash -c 'ls'"},
        "allow",
    ),
]


@pytest.mark.parametrize(
    ("rules", "mode", "name", "arguments", "expected"),
    [pytest.param(*c[1:], id=c[0]) for c in CASES],
)
async def test_scenario(judge, rules, mode, name, arguments, expected):
    judged = await judge(rules, name, arguments, mode=mode)
    assert judged.decision == expected, judged.event["reason"]
