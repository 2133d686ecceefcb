"""Settings from the environment: each type's spellings, the errors that name the variable, and
the rules the dataclass itself enforces. Pure; no database."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from rag.errors import ConfigError
from rag.settings import SETTINGS_DOC, Settings, env_name


@pytest.mark.parametrize(
    ("variable", "raw", "field", "value"),
    [
        ("RAG_CANDIDATES", "75", "candidates", 75),
        ("RAG_VECTOR_MAX_DISTANCE", "0.125", "vector_max_distance", 0.125),
        ("RAG_REQUIRE_ANSWER_TYPE", "no", "require_answer_type", False),
        ("RAG_REQUIRE_ANSWER_TYPE", " ON ", "require_answer_type", True),
        ("RAG_REQUIRE_ANSWER_TYPE", "0", "require_answer_type", False),
        ("RAG_EMBEDDER", "fake", "embedder", "fake"),
        ("DATABASE_URL", "postgresql://db/rag", "database_url", "postgresql://db/rag"),
        ("RAG_LOG_FORMAT", "json", "log_format", "json"),
    ],
)
def test_a_variable_sets_its_field(variable: str, raw: str, field: str, value: object) -> None:
    assert getattr(Settings.from_env({variable: raw}), field) == value


def test_a_path_expands_the_home_directory() -> None:
    data_dir = Settings.from_env({"RAG_DATA_DIR": "~/kb"}).data_dir
    assert data_dir == Path.home() / "kb"


def test_an_empty_variable_keeps_the_default() -> None:
    assert Settings.from_env({"RAG_CANDIDATES": ""}).candidates == Settings().candidates


def test_overrides_win_over_the_environment_and_none_is_no_override() -> None:
    s = Settings.from_env({"RAG_CANDIDATES": "75"}, candidates=12)
    assert s.candidates == 12
    assert Settings.from_env({"RAG_CANDIDATES": "75"}, candidates=None).candidates == 75


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("RAG_CANDIDATES", "many"),
        ("RAG_CANDIDATES", "7.5"),
        ("RAG_VECTOR_MAX_DISTANCE", "close"),
        ("RAG_REQUIRE_ANSWER_TYPE", "maybe"),
    ],
)
def test_a_value_of_the_wrong_type_names_its_variable(variable: str, raw: str) -> None:
    with pytest.raises(ConfigError) as e:
        Settings.from_env({variable: raw})
    assert variable in str(e.value) and repr(raw) in str(e.value)


@pytest.mark.parametrize(
    ("variable", "raw", "choices"),
    [("RAG_LOG_FORMAT", "xml", "text, json"), ("RAG_RERANK", "llm", "none, cross-encoder")],
)
def test_an_unknown_choice_lists_the_choices(variable: str, raw: str, choices: str) -> None:
    with pytest.raises(ConfigError, match=choices):
        Settings.from_env({variable: raw})


def test_every_field_has_a_variable_and_a_line_of_documentation() -> None:
    names = [f.name for f in fields(Settings)]
    assert sorted(SETTINGS_DOC) == sorted(names)
    assert env_name("database_url") == "DATABASE_URL"
    assert all(env_name(n) == "RAG_" + n.upper() for n in names if n != "database_url")


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Settings().candidates = 3  # type: ignore[misc]
