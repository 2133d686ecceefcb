"""``rag calibrate``: fit the relevance filter to the embedding model, and ``--check`` the gate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from rag.cli.check import check as check_floors
from rag.cli.common import App, echo_json, fails_cleanly, json_option, pass_app
from rag.cli.evaluation import num, rate, retrieved_set, set_options
from rag.eval.gate import (
    DEFAULT_MAX_FALSE,
    DEFAULT_MIN_RECALL,
    GATE_MAX_FALSE,
    OTHER_MIN_RECALL,
    UNGATED_TAGS,
    gated,
)

# Profile sections calibrated elsewhere, which recalibrating the filter keeps.
KEPT_SECTIONS = ("fusion",)
# The same selection rule calibrate.py documents, for the profile file.
SELECTION_RULE = (
    "highest answer recall with false-answer rate <= max_false_answer; ties: fewer false answers, "
    "lower vector_max_distance, lower support_max_distance, lower topic_max_distance, smaller "
    "vector_margin, higher min_coverage, higher support_min_coverage, higher topic_min_known, "
    "lower rare_df, lower rare_min_chunks, count before idf, lower prefix_credit"
)


@click.command()
@set_options
@click.option(
    "--max-false-answer",
    default=None,
    type=click.FloatRange(0, 1),
    help=f"Ceiling on the false-answer rate; default {DEFAULT_MAX_FALSE}, and "
    f"{GATE_MAX_FALSE} (the gate's floor) when --check checks the shipped set.",
)
@click.option(
    "--min-answer-recall",
    default=None,
    type=click.FloatRange(0, 1),
    help="Floor on answer recall: no setting below it is chosen, and --check fails below it; "
    f"default for the shipped set the gate's ({DEFAULT_MIN_RECALL}, other-language questions "
    f"{OTHER_MIN_RECALL}), for any other set none (--check: {DEFAULT_MIN_RECALL}).",
)
@click.option(
    "--holdout",
    "holdouts",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="A set that plays no part in the choice, reported for the chosen setting and along "
    "the frontier: a regression set JSONL over rag/sample/, or a knowledge base directory "
    "holding docs.jsonl and questions.jsonl (repeat it).",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Profile to write; default <data_dir>/profiles/<model>.json.",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Draw the trade-off curve into this PNG.",
)
@click.option(
    "--folds",
    default=5,
    show_default=True,
    type=click.IntRange(2, 20),
    help="Cross-validation folds for the held-out figures.",
)
@click.option(
    "--ungated-tag",
    "ungated",
    multiple=True,
    default=UNGATED_TAGS,
    show_default=True,
    help="not_found cases with this tag are reported, not counted as false answers "
    "(repeat it; 'none' counts every case).",
)
@click.option(
    "--other-as",
    default="other",
    show_default=True,
    help="Name of the set fitted to the other-language questions: other, or a language pair "
    "such as de>ru (a question in de over a mostly ru corpus) that wins over other.",
)
@click.option(
    "--contrast",
    "contrasts",
    multiple=True,
    type=click.FloatRange(0, 10),
    help="Contrasts swept for other-language questions (distances judged relative to the "
    "question's neighbourhood; repeat it); default 0, 1 and 2.",
)
@click.option(
    "--anchors",
    type=click.Choice(["both", "on", "off"]),
    default="both",
    show_default=True,
    help="Other-language sets: sweep the supported-vector rule counting the question's words "
    "(off), its identifiers, numbers and names across scripts with each share a window must "
    "hold (on), or all of these (both).",
)
@click.option(
    "--paraphrase-pull",
    "min_pull",
    type=click.FloatRange(-2, 2),
    default=None,
    help="The least pull of a question's missing focus words toward a passage for a close "
    "vector to stand in for them (rag.search.pull; -2: off); default: the profile in force's.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Do not calibrate: exit non-zero when the current profile misses the floors.",
)
@json_option
@pass_app
@fails_cleanly
def calibrate(
    app: App,
    max_false_answer: float | None,
    min_answer_recall: float | None,
    holdouts: tuple[Path, ...],
    output: Path | None,
    plot: Path | None,
    folds: int,
    ungated: tuple[str, ...],
    other_as: str,
    contrasts: tuple[float, ...],
    anchors: str,
    min_pull: float | None,
    check: bool,
    as_json: bool,
    **opts: Any,
) -> None:
    """Fit the relevance filter to the embedding model on a set of cases and write its profile.

    Each language relation of the set's questions to its corpus (same language, other language)
    gets its own thresholds; sets the cases cannot fit are kept from the profile in force.
    """
    ungated = tuple(t for t in ungated if t.lower() != "none")
    # the shipped set is held to the gate's floors; any other set to the target
    shipped = not any(opts.get(k) for k in ("set_path", "corpus", "questions"))
    if check:
        ceiling = (
            max_false_answer
            if max_false_answer is not None
            else GATE_MAX_FALSE
            if shipped
            else DEFAULT_MAX_FALSE
        )
        check_floors(
            app,
            opts,
            DEFAULT_MIN_RECALL if min_answer_recall is None else min_answer_recall,
            ceiling,
            ungated,
            as_json,
            OTHER_MIN_RECALL,
        )
        return
    if max_false_answer is None:
        max_false_answer = DEFAULT_MAX_FALSE
    from rag.errors import ConfigError, InputError
    from rag.eval import calibrate as cal
    from rag.eval import relation_fit as rf
    from rag.search.profiles import read_profile, relation_entries, slug, thresholds, write_profile
    from rag.search.relations import OTHER, SAME, is_relation_key
    from rag.search.thresholds import Thresholds

    if app.embedder is None:
        raise ConfigError("calibration fits an embedding model's thresholds; set RAG_EMBEDDER")
    if other_as == SAME or not is_relation_key(other_as):
        raise click.BadParameter(
            f"{other_as!r} is neither other nor a language pair like de>ru",
            param_hint="--other-as",
        )
    evalset, engine, owner, everything = retrieved_set(
        app, opts, use_profile=False, progress=not as_json
    )
    cases, retrievals, aside = gated(evalset.cases, everything, ungated)
    if not any(c.answerable for c in cases) or all(c.answerable for c in cases):
        raise InputError("calibration needs both answerable and not_found cases")
    held = [held_out_set(app, path, progress=not as_json) for path in holdouts]
    model_id = app.embedder.model_id
    try:
        # the profile in force joins each sweep: recalibrating never ends below it
        current, current_path = thresholds(app.settings, model_id)
    except ConfigError:
        current, current_path = Thresholds(engine.params), None
    fits: dict[str, Any] = {}
    skipped: list[str] = []
    for name, g in rf.groups(cases, retrievals, aside, other_as).items():
        if not g.fittable:
            skipped.append(f"{name} ({len(g.cases)} cases, not both answerable and not_found)")
            continue
        in_force = name if name in current.sets else OTHER if name != SAME else SAME
        was_pull = current.get(in_force).paraphrase_min_pull
        floor = (
            min_answer_recall
            if min_answer_recall is not None
            else (DEFAULT_MIN_RECALL if name == SAME else OTHER_MIN_RECALL)
            if shipped
            else 0.0
        )
        f = rf.fit(
            engine,
            name,
            g,
            max_false_answer,
            folds,
            current.get(in_force),
            current.contrast_of(in_force),
            tuple(dict.fromkeys(contrasts)) or rf.CONTRASTS,
            anchors={"both": rf.ANCHORS, "on": rf.ANCHORS[1:], "off": (None,)}[anchors],
            min_pull=was_pull if min_pull is None else min_pull,
            stats_min_chunks=current.get(in_force).stats_min_chunks,
            floor=floor,
            agreement_max_distance=current.get(in_force).agreement_max_distance,
        )
        if f.chosen is None:
            _print_frontier(f.sweep, f.front, None, as_json)
            under = cal.select(f.sweep, max_false_answer)
            why = (
                f"keeps false answers at or below {max_false_answer:.1%}"
                if under is None
                else f"keeps false answers at or below {max_false_answer:.1%} with answer "
                f"recall at or above {floor:.1%} (the best under the ceiling recalls "
                f"{f.sweep.figures(under).answer_recall:.1%})"
            )
            click.echo(f"rag: error: no setting {why} for the {name} questions", err=True)
            sys.exit(1)
        fits[name] = f
    if not fits:
        raise InputError(
            "calibration needs answerable and not_found cases in one language relation; "
            + "; ".join(skipped)
        )
    from rag.eval import holdout as ho

    chosen_t = current.with_sets({name: f.params for name, f in fits.items()})
    held_each, held_total = ho.report(held, chosen_t)
    # the same-language frontier judged on the held-out sets: what each step costs there
    held_front = (
        {
            i: ho.report(held, ho.with_same(chosen_t, fits[SAME].sweep.params(i)))[1]
            for i in fits[SAME].front
        }
        if held and SAME in fits
        else {}
    )
    path = output or app.settings.data_dir / "profiles" / f"{slug(model_id)}.json"
    set_name = evalset.label
    relations = relation_entries(current_path)
    for name, f in fits.items():
        if name != SAME:
            # a relation's fusion knobs (bench/bench_fusion.py --relations) stay as they were
            was = relations.get(name)
            kept_fusion = (
                {"fusion": was["fusion"]} if isinstance(was, dict) and "fusion" in was else {}
            )
            relations[name] = {
                "params": f.params.as_dict(),
                "contrast": f.contrast,
                **rf.entry(f, set_name, max_false_answer, ungated),
                **kept_fusion,
            }
    if SAME in fits:
        same = fits[SAME]
        default = same.params
        head = {
            **rf.entry(same, set_name, max_false_answer, ungated),
            "selection": SELECTION_RULE,
            **({"held_out_sets": ho.as_dict(held_each, held_total)} if held else {}),
        }
    else:
        default = current.default
        head = {
            k: v
            for k, v in (read_profile(current_path) if current_path else {}).items()
            if k not in ("model_id", "params", "relations")
        }
    # sections other commands calibrate (fusion) stay as the profile in force has them
    kept = {
        k: v
        for k, v in (read_profile(current_path) if current_path else {}).items()
        if k in KEPT_SECTIONS
    }
    write_profile(
        path,
        model_id,
        default,
        {**head, **({"relations": relations} if relations else {}), **kept},
    )
    held_points = [
        (f.false_answer_rate or 0.0, f.answer_recall or 0.0) for f in held_front.values()
    ]
    plots = _plots(
        fits, plot, evalset.label, model_id, max_false_answer, cal.plot, slug, held_points
    )
    if as_json:
        main = fits.get(SAME) or next(iter(fits.values()))
        echo_json(
            {
                "set": set_name,
                "owner": owner,
                **_fit_json(main, ungated),
                "relations": {name: _fit_json(f, ungated) for name, f in fits.items()},
                "held_out_sets": ho.as_dict(held_each, held_total) if held else None,
                "held_out_frontier": [
                    {**_frontier_row(fits[SAME].sweep, i), "held_out": f.as_dict()}
                    for i, f in held_front.items()
                ],
                "skipped": skipped,
                "profile": str(path),
                "plot": str(plot) if plot else None,
                "plots": plots,
            }
        )
        return
    click.echo(f"set {set_name}: {len(cases)} cases, owner {owner}")
    for name, f in fits.items():
        _print_fit(name, f, max_false_answer, folds, ungated, held_front if name == SAME else {})
    if held:
        click.echo("\nheld-out sets (no part in the choice), with the chosen settings:")
        for hname, hf in [*held_each, ("all pooled", held_total)]:
            click.echo(
                f"  {hname:<22} answer recall {rate(hf.answer_recall, hf.recalled, hf.answerable)}"
                f", false answers {rate(hf.false_answer_rate, hf.false_answers, hf.no_answer)}"
                f", related {hf.related}+{hf.related_no_answer}"
            )
    for line in skipped:
        click.echo(f"\nkept from the profile in force: {line}")
    if OTHER not in fits and other_as != OTHER and other_as in fits:
        click.echo(f"\nthe other-language set is stored as {other_as}")
    click.echo(f"profile written: {path}")
    for p in plots:
        click.echo(f"plot written: {p}")


def held_out_set(app: App, path: Path, *, progress: bool) -> Any:
    """A held-out set, retrieved once: a regression set JSONL (over rag/sample/) or a knowledge
    base directory with docs.jsonl and questions.jsonl."""
    from rag.errors import InputError
    from rag.eval.holdout import HeldOutSet

    opts: dict[str, Any] = dict.fromkeys(
        ("set_path", "corpus", "name", "split", "tag_by", "answer_field", "withhold"), None
    )
    opts.update(questions=(), noanswer=(), gold_map=(), owner=None, profile=None)
    if path.is_dir():
        docs, questions = path / "docs.jsonl", path / "questions.jsonl"
        if not (docs.is_file() and questions.is_file()):
            raise InputError(
                f"{path}: a held-out knowledge base holds docs.jsonl and questions.jsonl"
            )
        opts.update(corpus=docs, questions=(questions,), name=path.name)
    else:
        opts.update(set_path=path)
    evalset, engine, _, retrievals = retrieved_set(app, opts, use_profile=False, progress=progress)
    return HeldOutSet(evalset.label, engine, list(evalset.cases), list(retrievals))


def _plots(
    fits: dict[str, Any],
    plot: Path | None,
    label: str,
    model_id: str,
    ceiling: float,
    draw: Any,
    slug: Any,
    held: list[tuple[float, float]],
) -> list[str]:
    """One trade-off plot per fitted relation: ``plot`` for the first, ``<stem>-<name>`` next."""
    if not plot:
        return []
    out = []
    for n, (name, f) in enumerate(fits.items()):
        path = plot if n == 0 else plot.with_name(f"{plot.stem}-{slug(name)}{plot.suffix}")
        draw(
            f.sweep,
            f.chosen,
            ceiling,
            path,
            f"{label} ({name}), {model_id}: {len(f.sweep)} settings",
            held if n == 0 else (),  # the same-language fit comes first
        )
        out.append(str(path))
    return out


def _fit_json(f: Any, ungated: tuple[str, ...]) -> dict[str, Any]:
    return {
        "cases": len(f.group.cases),
        "swept_settings": len(f.sweep),
        "params": f.params.as_dict(),
        "contrast": f.contrast,
        "figures": f.report.figures.as_dict(),
        "held_out": f.held_out.as_dict(),
        "ungated": {
            "tags": list(ungated),
            "not_found": f.side.no_answer,
            "answered": f.side.false_answers,
        },
        "frontier": [_frontier_row(f.sweep, i) for i in f.front],
    }


def _print_fit(
    name: str,
    f: Any,
    ceiling: float,
    folds: int,
    ungated: tuple[str, ...],
    held_front: dict[int, Any],
) -> None:
    fig, s = f.report.figures, f.sweep
    click.echo(
        f"\nthresholds {name}: {len(f.group.cases)} cases ({fig.answerable} answerable, "
        f"{fig.no_answer} not_found); {len(s)} settings swept"
    )
    _print_frontier(s, f.front, f.chosen, False, held_front)
    swept = s.figures(f.chosen)
    # the sweep does not model the related answer: it counts them among the refusals
    if (fig.recalled, fig.false_answers, fig.refused + fig.related) != (
        swept.recalled,
        swept.false_answers,
        swept.refused,
    ):
        click.echo(
            "rag: warning: the sweep and the engine disagree on the chosen setting "
            f"({swept.as_dict()} vs {fig.as_dict()}); the engine's figures are reported",
            err=True,
        )
    click.echo(
        f"\nchosen for {name} (false answers <= {ceiling:.1%}, answer recall >= {f.floor:.1%}): "
        f"contrast={f.contrast:g}, " + ", ".join(f"{k}={v}" for k, v in f.params.as_dict().items())
    )
    click.echo(
        f"  whole set: answer recall {rate(fig.answer_recall, fig.recalled, fig.answerable)}"
        f", false answers {rate(fig.false_answer_rate, fig.false_answers, fig.no_answer)}"
        f", false refusals {rate(fig.false_refusal_rate, fig.refused, fig.answerable)}"
    )
    p = f.held_out.pooled
    click.echo(
        f"  held out ({folds}-fold CV): answer recall "
        f"{rate(p.answer_recall, p.recalled, p.answerable)}, false answers "
        f"{rate(p.false_answer_rate, p.false_answers, p.no_answer)}, false refusals "
        f"{rate(p.false_refusal_rate, p.refused, p.answerable)}"
    )
    if f.group.aside:
        click.echo(
            f"  not counted ({', '.join(ungated)}): {f.side.false_answers} of "
            f"{f.side.no_answer} not_found cases got sources"
        )


def _frontier_row(s: Any, i: int) -> dict[str, Any]:
    return {**s.figures(i).as_dict(), "params": s.params(i).as_dict()}


def _print_frontier(
    s: Any,
    front: list[int],
    chosen: int | None,
    as_json: bool,
    held: dict[int, Any] | None = None,
) -> None:
    """Every setting no other beats on both rates, fewest false answers first; with held-out
    sets, what each one recalls and answers falsely there."""
    if as_json:
        return
    click.echo(
        "\nfrontier  false-ans  recall  refusals  distance  margin  coverage  rare_df  "
        "min_chunks  mode   prefix  support     topic"
        + ("       held-out recall  false-ans" if held else "")
    )
    for i in front:
        f, p = s.figures(i), s.params(i)
        mark = "*" if i == chosen else " "
        h = (held or {}).get(i)
        click.echo(
            f"  {mark}       {num(f.false_answer_rate)}   {num(f.answer_recall)}   "
            f"{num(f.false_refusal_rate)}   {p.vector_max_distance:<8g}  "
            f"{p.vector_margin:<6g}  {p.min_coverage:<8g}  {p.rare_df:<7g}  "
            f"{p.rare_min_chunks:<10}  {p.coverage_mode:<5}  {p.prefix_credit:<6g}  "
            + (
                f"{p.support_max_distance:g}/{p.support_min_coverage:g}"
                if p.support_max_distance > 0
                else "off"
            ).ljust(10)
            + "  "
            + (
                f"{p.topic_max_distance:g}/{p.topic_min_known:g}"
                if p.topic_max_distance > 0
                else "off"
            ).ljust(10)
            + (
                f"  {num(h.answer_recall)} ({h.recalled}/{h.answerable})  "
                f"{num(h.false_answer_rate)} ({h.false_answers}/{h.no_answer})"
                if h is not None
                else ""
            )
        )


# Added to the `rag` group by rag.cli.main.
COMMANDS = (calibrate,)
