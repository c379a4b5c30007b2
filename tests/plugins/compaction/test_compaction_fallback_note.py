"""The note of a fallback's summary (``_fallback.fallback_summary``): one note, however
many fallbacks followed each other, counting every message they dropped; it says "in
part" once any of them kept a part summarised."""

from __future__ import annotations

import pytest
from compaction_util import PREVIOUS

from dsh_compaction._fallback import dropped_note, fallback_summary, summarised_before

pytestmark = pytest.mark.plugins("compaction")

CODE = "SUMMARY_TOO_SHORT"


def test_an_earlier_fallbacks_note_is_replaced_by_one_counting_both() -> None:
    earlier = fallback_summary(PREVIOUS, None, 12, "SUMMARY_ECHOED")
    assert fallback_summary(earlier, None, 5, CODE) == f"{PREVIOUS}\n\n{dropped_note(17, CODE)}"


def test_a_note_alone_is_replaced_too() -> None:
    earlier = fallback_summary(None, None, 12, CODE)
    assert fallback_summary(earlier, None, 5, CODE) == dropped_note(17, CODE)


def test_a_note_in_part_stays_in_part() -> None:
    earlier = fallback_summary(PREVIOUS, "so far", 12, CODE)
    assert earlier == f"so far\n\n{dropped_note(12, CODE, in_part=True)}"
    assert fallback_summary(earlier, None, 5, CODE) == (
        f"so far\n\n{dropped_note(17, CODE, in_part=True)}"
    )


def test_the_summary_so_far_that_ends_with_the_note_carries_its_count() -> None:
    """A summariser that merged the previous summary may keep its note at the end."""
    so_far = f"{PREVIOUS}\n\n{dropped_note(12, CODE)}"
    assert fallback_summary(PREVIOUS, so_far, 5, CODE) == (
        f"{PREVIOUS}\n\n{dropped_note(17, CODE, in_part=True)}"
    )


def test_a_note_inside_a_summary_is_the_summarisers_text() -> None:
    """Only a note that ends the text is a fallback's: one the summariser merged into
    its summary, words after it, is left as it wrote it."""
    summary = f"{dropped_note(12, CODE)}\n\n## Progress\nf1.py read."
    assert fallback_summary(summary, None, 5, CODE) == f"{summary}\n\n{dropped_note(5, CODE)}"


def test_a_note_alone_is_no_summary_kept() -> None:
    """What the fallback's warning says it kept (``summarised_before``)."""
    assert summarised_before(fallback_summary(PREVIOUS, None, 12, CODE))
    assert summarised_before(f"{dropped_note(12, CODE)}\n\n## Progress\nf1.py read.")
    assert not summarised_before(fallback_summary(None, None, 12, CODE))
    assert not summarised_before(None)
