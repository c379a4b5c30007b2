"""``dsh sessions`` without its action names the actions it takes (it said only
``the following arguments are required: ACTION``)."""

from __future__ import annotations

import pytest

from dsh.cli import main

pytestmark = pytest.mark.plugins("persistence")


def test_sessions_without_an_action_names_the_actions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["sessions"])
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    assert "required: {list,show,resume,delete}" in captured.err
    assert captured.out == ""
