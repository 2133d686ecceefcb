"""``rag calibrate --check``: the floors of the CI gate on a set, whole and per language relation."""

from __future__ import annotations

import sys
from typing import Any

import click

from rag.cli.common import App, echo_json
from rag.cli.evaluation import print_failure, rate, retrieved_set
from rag.eval.gate import gated


def check(
    app: App,
    opts: dict[str, Any],
    min_recall: float,
    max_false: float,
    ungated: tuple[str, ...],
    as_json: bool,
    other_floor: float = 0.0,
) -> None:
    """Exit 1 unless the profile that applies meets both floors on the set, and on each
    language relation's cases that are both answerable and not_found."""
    from rag.errors import InputError
    from rag.eval.metrics import Figures, score
    from rag.search.profiles import read_profile

    evalset, engine, owner, everything = retrieved_set(
        app, opts, use_profile=True, progress=not as_json
    )
    cases, retrievals, aside = gated(evalset.cases, everything, ungated)
    if not any(c.answerable for c in cases) or all(c.answerable for c in cases):
        raise InputError(
            f"set {evalset.name} has {len(cases)} cases; the check needs "
            "answerable and not_found cases and refuses to pass on nothing"
        )
    report = score(engine, evalset.name, cases, retrievals, engine.thresholds)
    f = report.figures
    side = score(
        engine, evalset.name, [c for c, _ in aside], [r for _, r in aside], engine.thresholds
    ).figures
    known: set[str] | None = None
    if engine.profile_path:
        data = read_profile(engine.profile_path)
        listed = data.get("failed_cases")
        known = set(listed) if isinstance(listed, list) else None
        for entry in (data.get("relations") or {}).values():
            more = entry.get("failed_cases") if isinstance(entry, dict) else None
            if isinstance(more, list):
                known = (known or set()) | set(more)
    failures = report.failures
    regressed = [r for r in failures if known is None or r.case.id not in known]
    relations = {
        rel: Figures.of([r for r in report.results if r.relation == rel])
        for rel in sorted({r.relation for r in report.results}, key=lambda x: x != "same")
    }
    if len(relations) == 1:
        relations = {}
    problems = []
    # With questions of both relations the floors hold for each apart; the other-language
    # questions' recall floor is ``other_floor`` (never above the one asked for).
    groups = list(relations.items()) if relations else [("", f)]
    for rel, fig in groups:
        where = f"{rel} questions: " if rel else ""
        floor = min_recall if rel in ("", "same") else min(min_recall, other_floor)
        if not fig.answerable or not fig.no_answer:
            continue
        if (fig.answer_recall or 0.0) < floor:
            problems.append(f"{where}answer recall {fig.answer_recall:.3f} < {floor}")
        if (fig.false_answer_rate or 0.0) > max_false:
            problems.append(f"{where}false-answer rate {fig.false_answer_rate:.3f} > {max_false}")
    if as_json:
        echo_json(
            {
                "passed": not problems,
                "problems": problems,
                "profile": engine.profile_path,
                "figures": f.as_dict(),
                "relations": {rel: g.as_dict() for rel, g in relations.items()},
                "ungated": {
                    "tags": list(ungated),
                    "not_found": side.no_answer,
                    "answered": side.false_answers,
                },
                "regressed": [r.as_dict() for r in regressed],
                "failures": [r.as_dict() for r in failures],
            }
        )
    else:
        click.echo(
            f"set {evalset.name}: {len(evalset.cases)} cases ({len(aside)} not counted), "
            f"owner {owner}; profile "
            f"{engine.profile_path or 'none (settings values)'}"
        )
        click.echo(
            f"answer recall {rate(f.answer_recall, f.recalled, f.answerable)} "
            + ("(floors per relation below)" if relations else f"(floor {min_recall})")
            + f", false answers {rate(f.false_answer_rate, f.false_answers, f.no_answer)} "
            f"(ceiling {max_false})"
        )
        for rel, g in relations.items():
            floor = min_recall if rel == "same" else min(min_recall, other_floor)
            click.echo(
                f"  {rel} questions: answer recall "
                f"{rate(g.answer_recall, g.recalled, g.answerable)} (floor {floor}), false answers "
                f"{rate(g.false_answer_rate, g.false_answers, g.no_answer)}"
            )
        if aside:
            click.echo(
                f"not counted ({', '.join(ungated)}): {side.false_answers} of "
                f"{side.no_answer} not_found cases got sources"
            )
        label = "regressed since calibration" if known is not None else "failing"
        click.echo(f"{label}: {len(regressed)}")
        for r in regressed:
            print_failure(r)
        if known is not None and len(failures) > len(regressed):
            click.echo(
                f"failing at calibration too: "
                f"{', '.join(r.case.id for r in failures if r.case.id in known)}"
            )
        click.echo("FAILED: " + "; ".join(problems) if problems else "ok: the floors hold")
    if problems:
        sys.exit(1)
