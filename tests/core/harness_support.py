"""Config shared by the harness tests (test_harness_*.py)."""

from __future__ import annotations

CONFIG = """
model: scripted
models:
  scripted: {provider: scripted}
agents:
  - id: helper
    system_prompt: You help.
    max_steps: 3
"""
