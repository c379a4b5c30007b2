"""What the model is told when a call is denied because no one answered (found by the
session-29 user-journey review): at the end of the chat's input the terminal front end
denies with ``no answer: the input ended ...``, and the model read "the user refused
it ... no answer: the input ended", which says both that someone refused and that no
one answered."""

from __future__ import annotations

import pytest

from dsh_permissions import PermissionAnswer

pytestmark = pytest.mark.plugins("permissions")


async def test_a_deny_saying_no_one_answered_is_not_told_as_a_refusal(judge):
    answer = PermissionAnswer.deny("no answer: the input ended (no one is at the terminal)")
    judged = await judge({}, "bash", {"command": "make test"}, answer=answer)
    reason = judged.event["reason"]
    assert "refused" not in reason
    assert reason == (
        "no one answered (asked through the front end 'asker'): the input ended "
        "(no one is at the terminal)"
    )
    assert reason in judged.result.content


async def test_a_person_refusing_is_still_told_as_a_refusal(judge):
    judged = await judge({}, "bash", {"command": "make test"}, answer=PermissionAnswer.deny("no"))
    assert judged.event["reason"] == "the user refused it (asked through the front end 'asker'): no"


@pytest.mark.parametrize(("rules", "waits"), [({}, 300.0), ({"ask_timeout": 5}, 5.0)])
async def test_the_request_tells_the_front_end_how_long_it_waits(judge, rules, waits):
    """So ``dsh chat`` can say "no answer within N s" under a question that ran out."""
    judged = await judge(rules, "bash", {"command": "make test"})
    assert judged.requests[0].timeout == waits
