"""Rule sets shared by the attack tests of test_permissions_attack_s17_*.py."""

from __future__ import annotations

ALLOW_ALL = {"allow": ["bash"], "deny": ["read(.env)"]}
