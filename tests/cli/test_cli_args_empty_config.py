"""``-c ''`` (``-c "$CONFIG"`` with the variable unset) is refused as ``-m ''`` is: Path('')
is '.', which dsh then tried to read as the config file (``.: cannot read: Is a
directory``) (core/src/dsh/_cli_args.py global_options)."""

from __future__ import annotations

import pytest

from dsh.cli import main


@pytest.mark.parametrize(
    "argv",
    [["-c", "", "run", "hi"], ["--config", " ", "models"], ["--config=", "config", "check"]],
)
def test_an_empty_config_file_name_is_refused(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "argument -c/--config: the config file name is empty" in err
    assert "Is a directory" not in err
