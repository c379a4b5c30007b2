"""dsh's one JSON encoding: events are written by orjson, everything else by
pydantic-core, and both write the same text."""

from __future__ import annotations

import datetime
import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh._json import check_json, decode, encode, encode_any

scalars = (
    st.none()
    | st.booleans()
    | st.integers()  # beyond 64 bits too: orjson refuses those, the fallback writes them
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()  # lone surrogates too: written with ASCII escapes
)
event_data = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


# no time limits: a busy machine can stall one example for a second (the 200 ms default
# deadline failed under CPU load); what is checked is the result, not the speed
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event_data)
def test_event_data_is_written_as_pydantic_core_writes_it_and_read_back_exactly(
    value: object,
) -> None:
    check_json(value, "test/event")  # what the log accepts
    text = encode(value)
    assert text == encode_any(value)
    back = decode(text)
    assert back == value
    assert json.dumps(back, sort_keys=True) == json.dumps(value, sort_keys=True)  # types too


def test_values_orjson_would_write_its_own_way_are_written_by_pydantic_core() -> None:
    class Key(str):
        pass

    when = datetime.datetime(2026, 12, 1, 3, 4, 5, tzinfo=datetime.UTC)
    for value in ({Key("k"): 1}, [when], {1: "non-string key"}, {"big": 2**70}, ["caf\udce9"]):
        assert encode(value) == encode_any(value)
    assert encode({"big": 2**70}) == b'{"big":1180591620717411303424}'
    assert decode(encode(["caf\udce9"])) == ["caf\udce9"]


def test_a_tool_result_keeps_nan_readable() -> None:
    # event data never holds NaN (check_json); a tool's result may, and says so
    assert encode_any({"x": math.nan}) == b'{"x":NaN}'
    assert math.isnan(decode(b'{"x":NaN}')["x"])
