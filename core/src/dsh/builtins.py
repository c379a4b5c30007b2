"""The core's own behaviour, written as a plugin on the public hooks (registered first,
its impls ``trylast``) so that any plugin can run before it or replace it."""

from __future__ import annotations
