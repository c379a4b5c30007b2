"""A failure is worded ``Type: message``; one whose message is empty by its type alone
(it read ``EOFError: ``, a colon and nothing after it, in a ``HookError``'s message, a
model's failure and a front end's deny)."""

from __future__ import annotations

from dsh import HookError
from dsh._stray import failure_words


def test_a_failure_without_a_message_is_its_type_alone() -> None:
    assert failure_words(EOFError()) == "EOFError"
    assert failure_words(KeyError("k")) == "KeyError: 'k'"
    assert failure_words(SystemExit(2)) == "SystemExit: 2"


def test_a_hook_error_of_one_names_its_type_without_a_colon() -> None:
    error = HookError("ui", "tools_approval", "Ui.tools_approval(request)", EOFError())
    assert str(error) == (
        "plugin 'ui' failed in hook tools_approval (impl Ui.tools_approval(request)): EOFError"
    )
