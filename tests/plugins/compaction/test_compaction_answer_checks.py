"""The answer checks (``_answers.refusal``) against summaries that are summaries: a
first summary quoting the user's long request, a summary the new messages leave as it
was, a filled-in template whose headings or labels are long; and what they still
refuse. ``copied`` stays linear on long runs of one character."""

from __future__ import annotations

import pytest

from dsh_compaction import DEFAULT_PROMPT
from dsh_compaction._answers import UNCHANGED_CHARS, copied, refusal
from dsh_compaction._summarise import AFTER

pytestmark = pytest.mark.plugins("compaction")

INSTRUCTIONS = (DEFAULT_PROMPT, AFTER)
SPEC = (
    "The endpoint must accept a JSON body with fields name, email and role; reject unknown "
    "fields with 422; log every rejection with the request id; never log the email. "
) * 8
SPOKEN = f"[user]\n{SPEC}\n\n[assistant]\nUnderstood, starting with the schema."
QUOTING = f'## Goal\nThe user\'s spec, verbatim:\n"{SPEC}"\n## Progress\nSchema started.'
#: a short summary (105 characters), but a summary
SHORT = (
    "## Goal\nPort module X to async; keep API.\n\n## Progress\nDone: a.py, b.py (tests pass)."
    "\n\n## Open tasks\nc.py"
)


def code(answer: str, merged: str, transcript: str, *, later: bool = False) -> str | None:
    refused = refusal(answer, merged, transcript, INSTRUCTIONS, later=later)
    return None if refused is None else refused.code


def test_a_first_summary_quoting_the_users_long_request_is_kept() -> None:
    """Nothing merged, nothing lost: SUMMARY_COPIED protects a merged summary."""
    assert code(QUOTING, "", SPOKEN) is None


def test_a_copy_of_the_transcript_dropping_the_merged_summary_is_refused() -> None:
    previous = "## Goal\nThe fact is 42; keep it.\n" * 3
    assert code(f"{previous}\n{SPEC}", previous, SPOKEN) == "SUMMARY_COPIED"


def test_a_summary_the_new_messages_add_nothing_to_is_kept() -> None:
    assert len(SHORT) >= UNCHANGED_CHARS
    assert code(SHORT, SHORT, "[user]\nthanks!\n\n[assistant]\nYou're welcome.") is None


@pytest.mark.parametrize("stored", ["noted", "Noted. I have the context.", "x" * 79])
def test_a_trivially_short_summary_said_back_unchanged_is_refused(stored: str) -> None:
    assert len(stored) < UNCHANGED_CHARS
    assert code(stored, stored, "[user]\nfix it\n\n[assistant]\nfixed") == "SUMMARY_UNCHANGED"


def test_a_later_chunks_answer_that_is_the_summary_so_far_is_kept() -> None:
    """Another piece of a log already summarised adds nothing: not a refusal of the
    whole compaction."""
    so_far = "## Goal\nRead the log."
    assert code(so_far, so_far, "[tool result: read]\nmore of the same", later=True) is None


CUSTOM_PROMPT = """Summarise the conversation. Use exactly this template, one line per item:
1. Primary Request and Intent:
2. Key Technical Concepts:
3. Files and Code Sections:
4. Errors and Fixes:
5. Pending Tasks:
6. Current Work:"""

FILLED = """1. Primary Request and Intent: fix typo in README
2. Key Technical Concepts: none
3. Files and Code Sections: README.md
4. Errors and Fixes: none
5. Pending Tasks: none
6. Current Work: done"""

HEADINGS_PROMPT = """Summarise the conversation. Use these headings:
## Primary request and intent
## Files and code sections touched
## Errors encountered and their fixes"""

UNDER_HEADINGS = """## Primary request and intent
Rename foo to bar.
## Files and code sections touched
a.py
## Errors encountered and their fixes
None."""


@pytest.mark.parametrize(
    ("prompt", "answer"),
    [
        (CUSTOM_PROMPT, FILLED),
        (HEADINGS_PROMPT, UNDER_HEADINGS),
        (DEFAULT_PROMPT, "## Goal\nBump v.\n\n## Files, commands and identifiers\nsetup.cfg"),
    ],
)
def test_a_terse_filled_in_template_with_long_labels_is_no_echo(prompt: str, answer: str) -> None:
    refused = refusal(answer, "", "[user]\nfix it\n\n[assistant]\ndone", (prompt, AFTER))
    assert refused is None, refused


@pytest.mark.parametrize("prompt", [CUSTOM_PROMPT, HEADINGS_PROMPT])
def test_a_custom_prompts_instructions_said_back_are_still_an_echo(prompt: str) -> None:
    """A sentence of the instructions is taken out wherever it is said back (its
    closing line, which the template prompt's answers are checked against too, not)."""
    answer = "Summarise the conversation.\n## Primary request and intent"
    refused = refusal(answer, "", "[user]\nfix it\n\n[assistant]\ndone", (prompt,))
    assert refused is not None and refused.code == "SUMMARY_ECHOED"


@pytest.mark.timeout(60)
def test_copied_is_linear_on_long_runs_of_one_character() -> None:
    """A weak model looping on one character, against a zero-filled dump: every stretch
    of the answer has one hash, and each used to be compared again at every place of
    the transcript (40,000 x 1,000,000: hours); each is now compared once, when found."""
    answer = "0" * 40_000
    transcript = "\n\n".join(f"[tool result: dump]\n{'0' * 6_000}" for _ in range(170))
    assert len(transcript) > 1_000_000
    assert copied(answer, transcript) == len(answer)
    assert copied("noted " + answer, transcript) == len(answer)
