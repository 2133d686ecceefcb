"""The abstention marker, recognised whole and held back from streams (pure, no server)."""

from __future__ import annotations

import pytest

from rag.answer.llm import ABSTAIN, AbstentionGate, abstains


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (ABSTAIN, True),
        (f"  {ABSTAIN}\n", True),
        (f"**{ABSTAIN}**", True),
        (f"`{ABSTAIN}`", True),
        (f"„{ABSTAIN}“", True),
        (ABSTAIN.lower() + ". Zdroje cenu neuvádějí.", True),
        ("NOT_IN", False),  # a cut-off marker is not the marker
        ("Not in sources.", False),
        ("Novák dostal cenu [1]. " + ABSTAIN, False),  # only a reply that starts with it
        ("", False),
    ],
)
def test_abstains(reply: str, expected: bool) -> None:
    assert abstains(reply) is expected


def _stream(pieces: list[str]) -> tuple[str, bool]:
    gate = AbstentionGate()
    shown = "".join(gate.feed(p) for p in pieces)
    if not gate.abstained:
        shown += gate.flush()
    return shown, gate.abstained


@pytest.mark.parametrize(
    "pieces",
    [
        [ABSTAIN],
        ["NOT_", "IN_SO", "URCES"],
        ["*", "*NOT_IN_SOURCES*", "*"],
        ["\n", " NOT_IN_SOURCES", " – zdroje o tom mlčí."],
    ],
)
def test_the_marker_never_reaches_the_user_however_it_is_split(pieces: list[str]) -> None:
    assert _stream(pieces) == ("", True)


@pytest.mark.parametrize(
    "pieces",
    [
        ["Novák ", "dostal ", "cenu [1]."],
        ["NOT", "E: cena [1]."],
        ["N", "O", "T", "_", "I", "N"],  # ends while it could still have been the marker
        ["**Novák** [1]"],
    ],
)
def test_an_answer_passes_whole(pieces: list[str]) -> None:
    assert _stream(pieces) == ("".join(pieces), False)


def test_an_answer_is_held_only_while_it_could_be_the_marker() -> None:
    gate = AbstentionGate()
    assert gate.feed("No") == ""  # "NO" may still become the marker
    assert gate.feed("vák") == "Novák"  # "NOV" cannot: everything held goes out at once
    assert gate.feed(" dostal") == " dostal"  # from here on, piece by piece
