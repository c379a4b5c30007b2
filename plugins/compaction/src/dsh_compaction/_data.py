"""The data a compaction logs beside its outcome: the summariser's calls, and what
``compact/summary`` records of a summary and its plan."""

from __future__ import annotations

from typing import Any

from dsh_compaction._plan import Plan
from dsh_compaction._summarise import Spent, Summary

__all__ = ["spent_data", "summary_data"]


def spent_data(spent: Spent | None) -> dict[str, Any]:
    """The ``model``, ``calls`` and ``usage`` of the summariser's calls (none: {})."""
    if spent is None or not spent.calls:
        return {}
    return {"model": spent.model, "calls": spent.calls, "usage": spent.usage.model_dump()}


def summary_data(summary: Summary, plan: Plan, spent: Spent) -> dict[str, Any]:
    data: dict[str, Any] = {
        "summary": summary.text,
        "replaces": plan.cut,
        "kept": list(plan.kept),
        "summarised": len(plan.summarised),
        "merged_previous": plan.previous is not None,
        "source": summary.source,
    }
    if summary.source == "model":
        data |= spent_data(spent)
        data["truncated"] = summary.truncated
    return data
