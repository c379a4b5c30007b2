"""Review of s12's core changes, from mutating them: the redaction of parts of a key
(odd lengths, the 8-character floor, a key of exactly 8, parts that come back, parts
at both ends of a long run), the duplicate-id check past a bad agent entry, the words
Ctrl-C uses for the lines it drops, and the session id at the head of a --json line."""

from __future__ import annotations

import json

import pytest

from dsh._secrets import redact
from dsh.config import ConfigError, load_config
from dsh.session import Session

KEY25 = "sk-test-SECRET-0123456789"  # 25 characters: a part of 13 is at least half


def test_an_odd_length_key_hides_parts_of_half_rounded_up_and_not_shorter() -> None:
    assert redact(f"head {KEY25[:13]}", (KEY25,)) == "head ***"
    assert redact(f"{KEY25[-13:]} tail", (KEY25,)) == "*** tail"
    assert redact(f"head {KEY25[:12]}", (KEY25,)) == f"head {KEY25[:12]}"
    assert redact(f"{KEY25[-12:]} tail", (KEY25,)) == f"{KEY25[-12:]} tail"


def test_a_part_is_hidden_as_far_as_it_goes_on_like_the_key() -> None:
    key = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"  # 44: half is 22
    assert redact(f"{key[:30]} <cut>", (key,)) == "*** <cut>"
    assert redact(f"<cut> {key[-30:]}", (key,)) == "<cut> ***"
    assert redact(f"{key[:22]}{key[:22]}", (key,)) == "***"  # two parts side by side


def test_every_part_is_hidden_not_only_the_first() -> None:
    key = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    head, tail = key[:25], key[-25:]
    shown = redact(f"1 {head} 2 {tail} 3 {head} 4 {tail} 5", (key,))
    assert shown == "1 *** 2 *** 3 *** 4 *** 5"


def test_a_key_of_exactly_the_shortest_length_is_hidden_whole_not_in_parts() -> None:
    key = "abcdefgh"  # MIN_LENGTH: no part of it is hidden, the whole key is
    assert redact(f"x {key} y", (key,)) == "x *** y"
    assert redact("x abcdefg y", (key,)) == "x abcdefg y"


def test_a_part_shorter_than_8_characters_is_never_hidden() -> None:
    key = "0123456789"  # 10 characters: half is 5, but parts under 8 stay
    assert redact("id 0123456 and 3456789", (key,)) == "id 0123456 and 3456789"
    assert redact("id 01234567!", (key,)) == "id ***!"


def test_a_key_whose_start_repeats_is_hidden_from_where_it_goes_on_like_the_key() -> None:
    """Occurrences of the key's start overlap here (aaaa...): each is followed, so the
    one that goes on like the key is hidden whole, not only the first."""
    key = "a" * 16 + "BCDEFGHIJKLMNOPQ"  # 32 characters: half is 16
    assert redact("a" * 20 + "BCDEFGHIJ!", (key,)) == "***!"


def test_a_bad_agent_entry_after_a_good_one_with_its_id_is_the_duplicate() -> None:
    """The duplicate is the later entry in the file, whichever of the two is bad."""
    with pytest.raises(ConfigError) as caught:
        load_config(text="agents:\n  - id: a\n  - id: a\n    max_steps: 0\n")
    paths = [p.path for p in caught.value.problems]
    assert "agents[1].id" in paths and "agents[0].id" not in paths
    (duplicate,) = [p for p in caught.value.problems if p.path == "agents[1].id"]
    assert "first at agents[0].id" in duplicate.reason


def test_entries_whose_id_is_bad_are_not_called_duplicates() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(text="agents:\n  - id: ''\n  - id: ''\n")
    assert not [p for p in caught.value.problems if "duplicate" in p.reason]


def test_ctrl_c_names_at_most_three_dropped_lines_and_counts_the_rest() -> None:
    from dsh._cli_chat import _dropped

    assert _dropped([]) == ""
    assert _dropped(["run the tests"]) == ", and dropped 1 waiting line: run the tests"
    assert _dropped(["a", "b", "c"]) == ", and dropped 3 waiting lines: a; b; c"
    four = _dropped(["a", "b", "c", "d"])
    assert four == ", and dropped 4 waiting lines: a; b; c and 1 more"
    long = _dropped(["x" * 200])
    assert len(long) < 120 and long.startswith(", and dropped 1 waiting line: xxx")


def test_a_json_line_names_its_session_first_then_the_stored_event() -> None:
    session = Session("s-1")
    event = session._append("turn/start", {"turn": 1})
    line = event.to_json("s-1")
    assert line.startswith(('{"session":"s-1",', '{"session": "s-1",'))
    raw = json.loads(line)
    assert list(raw) == ["session", "type", "seq", "time", "data"]
    assert {k: v for k, v in raw.items() if k != "session"} == json.loads(event.to_json())
    assert "session" not in json.loads(event.to_json())


def test_a_key_the_cap_cuts_a_few_bytes_out_of_is_not_shown_nearly_whole() -> None:
    from dsh.builtin_tools._bash import MAX_OUTPUT_BYTES
    from dsh.builtin_tools._output_cap import HeadTail as _HeadTail

    key = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"  # 44 characters
    capped = _HeadTail(MAX_OUTPUT_BYTES)
    before = "x" * (MAX_OUTPUT_BYTES // 2 - 20)  # the head ends 20 characters in
    capped.add((before + key + "y" * (MAX_OUTPUT_BYTES // 2 - 19)).encode())
    shown = redact(capped.text(), (key,))
    assert "bytes of output cut here" in shown
    visible = [len(part) for part in (key[:20], key[-19:]) if part in shown]
    assert sum(visible) < len(key) // 2, "most of the key is left in the result"
