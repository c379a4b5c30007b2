"""An interactive bash on a pseudo-terminal, with job control, typed at as a person
would (``dsh run ... &``, ``dsh chat &``): imported as ``shell_support``."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pexpect

PROMPT = "shell-ready> "
STATUS = re.compile(r"STATUS=(\d+)")


class Shell:
    """An interactive bash on a pseudo-terminal, with job control."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.child = pexpect.spawn(
            "bash",
            ["--norc", "--noprofile", "-i"],
            env=env,
            cwd=str(cwd),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 200),
        )
        self.child.logfile_read = io.StringIO()
        self.child.expect_exact(PROMPT)
        self.type("set -b +o history; bind 'set enable-bracketed-paste off' 2>/dev/null")

    def type(self, line: str) -> None:
        """Type ``line`` and wait for the shell's next prompt."""
        self.child.sendline(line)
        self.child.expect_exact(PROMPT)

    def status(self, job: str) -> int:
        """``wait JOB``'s status: the job's exit status once it has ended, 128 + N if it
        was stopped by signal N (bash does not wait for a stopped job)."""
        self.child.sendline(f"wait {job}; echo STATUS=$?")
        self.child.expect(STATUS)
        return int(self.child.match.group(1))

    @property
    def screen(self) -> str:
        log = self.child.logfile_read
        assert isinstance(log, io.StringIO)
        return log.getvalue()

    def close(self) -> None:
        self.child.sendline("kill -KILL %1 2>/dev/null")  # a job left stopped by a failure
        self.child.close(force=True)
