"""A plugin section (or an agent's options for a plugin) with a problem still has the
model names it sets checked, so ``dsh config check`` lists an unknown ``compaction.model``
with the section's other problems rather than only once those are fixed."""

from __future__ import annotations

from pathlib import Path

from config_support import Summaries, fails, write
from pydantic import BaseModel, ConfigDict

from dsh.config import ModelName

MODELS = "models:\n  fast: {provider: x}\n"


class Strict(BaseModel):  # as dsh-compaction's: unknown keys fail in pydantic itself
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    model: ModelName | None = None
    threshold: float = 0.8


class Required(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str
    model: ModelName | None = None


def test_a_bad_sections_unknown_model_is_reported_with_its_other_problems(
    tmp_path: Path,
) -> None:
    file = write(tmp_path, f"{MODELS}strict:\n  thresold: 0.5\n  model: fsat\n")
    err = fails(file, {"strict": Strict})
    assert [(p.path, p.reason.split(" (")[0]) for p in err.problems] == [
        ("strict.thresold", "unknown key"),
        ("strict.model", "unknown model 'fsat'"),
    ]
    assert err.problems[1].source == f"{file}:5:3"
    assert err.problems[1].reason.endswith("did you mean 'fast'?")

    text = f"{MODELS}summaries:\n  note: [1]\n  model: fsat\n"
    err = fails(write(tmp_path, text), {"summaries": Summaries})
    assert [p.path for p in err.problems] == ["summaries.note", "summaries.model"]


def test_an_agents_bad_plugin_options_have_their_model_names_checked_too(
    tmp_path: Path,
) -> None:
    text = f"{MODELS}agents:\n  - id: a\n    options: {{strict: {{threshold: x, model: fsat}}}}\n"
    err = fails(write(tmp_path, text), {"strict": Strict})
    assert [p.path for p in err.problems] == [
        "agents[0].options.strict.threshold",
        "agents[0].options.strict.model",
    ]


def test_a_name_is_not_checked_when_the_section_is_bad_without_its_bad_keys(
    tmp_path: Path,
) -> None:
    """Left without a required field, or with the model name itself bad, the section
    says only what pydantic said: its names are checked once it loads."""
    text = f"{MODELS}required:\n  model: fsat\n"
    err = fails(write(tmp_path, text), {"required": Required})
    assert [p.path for p in err.problems] == ["required.url"]
    err = fails(write(tmp_path, f"{MODELS}strict:\n  model: 3\n"), {"strict": Strict})
    assert [p.path for p in err.problems] == ["strict.model"]


def test_a_good_name_in_a_bad_section_is_no_problem(tmp_path: Path) -> None:
    err = fails(
        write(tmp_path, f"{MODELS}strict:\n  thresold: 0.5\n  model: fast\n"), {"strict": Strict}
    )
    assert [p.path for p in err.problems] == ["strict.thresold"]
