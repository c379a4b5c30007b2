"""Values shared by the hot-path tests (test_hot_path_*.py)."""

from __future__ import annotations

from dsh.messages import (
    ToolCall,
    Usage,
)

USAGE = Usage(input_tokens=3, output_tokens=2)


CALL = ToolCall(id="c1", name="add", arguments='{"a": 1}')
