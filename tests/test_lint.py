"""The code itself: ruff's lint rules and formatting (as pyproject.toml selects them) and mypy on
the package. Each test prints what the tool reported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TREES = ["rag", "tests", "bench"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=240
    )


@pytest.mark.parametrize(
    "command",
    [
        ("ruff", "check", "--no-cache", *TREES),
        ("ruff", "format", "--check", "--no-cache", *TREES),
        ("mypy", "rag"),
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_lint(command: tuple[str, ...]) -> None:
    result = _run(*command)
    assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout}{result.stderr}"
