"""CPU instructions per turn of each loop configuration, counted by callgrind.

Wall-clock figures on a shared VM move 20-50 % from run to run; instruction counts do
not (within ~1-2 %: hash seeds and addresses still vary). This counts the instructions
of ``N`` and ``N + 200`` turns of the loop scenario of ``run.py`` (bench/_dsh_cases.py)
in a child process under ``valgrind --tool=callgrind`` and reports the difference per
turn, so start-up and tear-down cancel out. It counts work, not waiting: fsync and
other system calls cost time that no instruction count shows.

Needs valgrind (``apt-get install valgrind``); each configuration takes ~1 minute.

    python bench/instructions.py [KIND ...]   # default: bare two memory jsonl-nofsync
    python bench/instructions.py compaction permissions   # each plugin alone
    python bench/instructions.py noop   # loop.py's 3 no-op plugins on every hook
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
KINDS = ("bare", "two", "memory", "jsonl-nofsync")  # the default; also each plugin alone
LABELS = {
    "bare": "dsh bare",
    "noop": "dsh 3 no-op x4 hooks",
    "compaction": "dsh + compaction",
    "permissions": "dsh + permissions",
    "two": "dsh + compaction + permissions",
    "memory": "dsh + 3 plugins (in-memory log)",
    "jsonl-nofsync": "dsh + 3 plugins (JSONL, fsync never)",
}
BASE, EXTRA = 20, 200


def count(kind: str, turns: int) -> int:
    """Instructions of a whole child process that runs ``turns`` turns of ``kind``."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--child",
                kind,
                str(turns),
                scratch,
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or found is None:
            raise SystemExit(f"callgrind failed for {kind}:\n{done.stderr[-2000:]}")
        return int(found.group(1))


def child(kind: str, turns: int, scratch: str) -> None:
    sys.path.insert(0, str(HERE))
    import gc

    import _dsh_cases

    _dsh_cases.persistence_dir(Path(scratch))
    gc.disable()  # as the timed benches run

    async def main() -> None:
        configured = await _dsh_cases.Configured(kind).start()
        try:
            await configured.run(turns)
            if not configured.last_turn_ok():
                raise SystemExit(f"{kind}: the last turn did not complete")
        finally:
            await configured.stop()

    asyncio.run(main())


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]), argv[3])
        return 0
    kinds = argv or list(KINDS)
    unknown = [k for k in kinds if k not in LABELS]
    if unknown:
        print(f"unknown kind(s) {unknown}; choose from {', '.join(LABELS)}", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    print(f"{'case':40s} {'instructions/turn':>18s}")
    for kind in kinds:
        per_turn = (count(kind, BASE + EXTRA) - count(kind, BASE)) / EXTRA
        print(f"{LABELS[kind]:40s} {per_turn:18,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
