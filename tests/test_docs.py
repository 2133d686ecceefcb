"""The README cannot drift: every command and every setting must appear in it."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import click

from rag.cli.main import cli
from rag.settings import SETTINGS_DOC, Settings, env_name

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str = "rag") -> list[str]:
    found = []
    for name, command in group.commands.items():
        path = f"{prefix} {name}"
        if isinstance(command, click.Group):
            found.extend(_commands(command, path))
        else:
            found.append(path)
    return found


def test_every_command_is_in_the_readme() -> None:
    commands = _commands(cli)
    assert len(commands) >= 12
    missing = [c for c in commands if f"`{c}" not in README]
    assert not missing, f"commands missing from README.md: {missing}"


def test_every_setting_is_in_the_readme_table() -> None:
    missing = [
        env_name(f.name) for f in fields(Settings) if f"| `{env_name(f.name)}` |" not in README
    ]
    assert not missing, f"settings missing from README.md: {missing}"


def test_every_setting_is_documented_in_code() -> None:
    assert set(SETTINGS_DOC) == {f.name for f in fields(Settings)}


def test_every_command_has_help() -> None:
    def walk(group: click.Group) -> list[click.Command]:
        out: list[click.Command] = []
        for command in group.commands.values():
            out.append(command)
            if isinstance(command, click.Group):
                out.extend(walk(command))
        return out

    undocumented = [c.name for c in walk(cli) if not (c.help or "").strip()]
    assert not undocumented, f"commands without help: {undocumented}"


def test_quick_start_is_two_commands_that_the_makefile_defines() -> None:
    start = README.index("## Quick start")
    block = README[start:].split("```sh", 1)[1].split("```", 1)[0]
    lines = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert lines == ["make serve", "make test"]
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    assert "\nserve:" in makefile and "\ntest:" in makefile
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert "make test" in ci


def test_every_path_the_docs_name_exists() -> None:
    # rag/... paths in the README and docs/, and the modules the README's layout table names
    # beside each package: a move that forgets the docs fails here.
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = []
    for doc in texts:
        for path in re.findall(r"\brag/[\w/]+\.(?:py|json|jsonl|txt)\b", doc.read_text("utf-8")):
            if not (ROOT / path).exists():
                missing.append(f"{doc.name}: {path}")
    for row in (ROOT / "README.md").read_text("utf-8").splitlines():
        m = re.match(r"\| `(rag/(?:\w+/)?)[\w.]*`", row)
        if not m:
            continue
        where = m.group(1) if m.group(1).endswith("/") else "rag/"
        for name in re.findall(r"`(\w+\.py)`", row):
            if not (ROOT / where / name).exists():
                missing.append(f"README.md layout: {where}{name}")
    assert not missing, missing
