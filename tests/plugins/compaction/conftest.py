"""Compaction tests: not collected when dsh-compaction is not installed (its modules
import it); when it is, each module's ``plugins("compaction")`` marker applies."""

from __future__ import annotations

from importlib.util import find_spec

if find_spec("dsh_compaction") is None:
    collect_ignore_glob = ["test_*.py"]
