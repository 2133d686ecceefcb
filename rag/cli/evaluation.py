"""``rag eval`` and ``rag calibrate``: measure the pipeline on a set of cases and fit the filter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from rag.cli.common import App, echo_json, fails_cleanly, json_option, pass_app


def set_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options that choose the cases and the corpus (shared by eval and calibrate)."""
    options = [
        click.option(
            "--set",
            "set_path",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Regression set (JSONL); default: the shipped rag/regression/cases.jsonl.",
        ),
        click.option(
            "--corpus",
            type=click.Path(exists=True, path_type=Path),
            help="Documents: a docs JSONL file or a directory; default for a regression "
            "set: rag/sample/.",
        ),
        click.option(
            "--questions",
            multiple=True,
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help='External questions {"id", "question", "relevant"}; needs --corpus.',
        ),
        click.option(
            "--noanswer",
            multiple=True,
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Questions the corpus must not answer, whatever their relevant field says.",
        ),
        click.option(
            "--map-gold",
            "gold_map",
            multiple=True,
            metavar="OLD=NEW",
            callback=_gold_map,
            help="Rewrite the id prefix OLD of --questions' relevant ids to NEW: questions of a "
            "parallel corpus over this one (xquad-de-=xquad-ru-).",
        ),
        click.option(
            "--split",
            type=click.Choice(["dev", "test"]),
            help="Keep only this half of the cases (SHA-1 of the id's last hyphen-separated "
            "part; XQuAD questions fall on the same side in every language).",
        ),
        click.option(
            "--tag-by",
            "tag_by",
            metavar="FIELD",
            help="Tag each --questions case with FIELD=value, the value of that string field of "
            "its record (ctkfacts' answer: answer=SUPPORTS, answer=REFUTES); figures are "
            "reported per tag.",
        ),
        click.option(
            "--answer-field",
            "answer_field",
            metavar="FIELD",
            help="The field of --questions' records that holds the answer's text (XQuAD's "
            "answer): report how often the extractive answer holds it.",
        ),
        click.option(
            "--withhold",
            type=click.IntRange(2, 1000),
            metavar="K",
            help="Leave every K-th document out of the corpus (SHA-1 of its id); questions "
            "whose gold documents are all left out must be refused (tag withheld): near-topic "
            "probes from the corpus itself.",
        ),
        click.option("--name", help="Name of the set in reports and in the owner name."),
        click.option(
            "--owner", help="Run against this existing owner instead of ingesting the corpus."
        ),
        click.option(
            "--profile",
            type=click.Path(path_type=Path),
            help="Calibration profile to evaluate (default: the one that applies).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _gold_map(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    pairs = []
    for value in values:
        old, sep, new = value.partition("=")
        if not sep or not old or not new:
            raise click.BadParameter(f"{value!r} is not OLD=NEW", ctx, param)
        pairs.append((old, new))
    return tuple(pairs)


def evalset_from(
    set_path: Path | None,
    corpus: Path | None,
    questions: tuple[Path, ...],
    noanswer: tuple[Path, ...],
    name: str | None,
    gold_map: tuple[tuple[str, str], ...] = (),
    split: str | None = None,
    tag_by: str | None = None,
    answer_field: str | None = None,
    withhold: int | None = None,
) -> Any:
    from rag.eval.sets import external_set, regression_set, split_set, withhold_set

    if questions or noanswer:
        if set_path:
            raise click.UsageError("--set and --questions/--noanswer exclude each other")
        if corpus is None or corpus.is_dir():
            raise click.UsageError("--questions/--noanswer need --corpus DOCS.jsonl")
        evalset = external_set(corpus, questions, noanswer, name, gold_map, tag_by, answer_field)
    else:
        if gold_map:
            raise click.UsageError("--map-gold rewrites --questions' relevant ids; add --questions")
        if tag_by:
            raise click.UsageError(
                "--tag-by reads a field of --questions' records; add --questions"
            )
        evalset = regression_set(set_path, corpus)
        if name:
            evalset.name = name
    if withhold:
        evalset = withhold_set(evalset, withhold)
    return split_set(evalset, split) if split else evalset


def refuse_half_embedded(app: App, owner: str, owner_id: int) -> None:
    """No figure is measured while some of the owner's chunks still wait for a vector.

    Raises:
        NotReady: the owner's embedding queue is not empty.
    """
    from rag.errors import NotReady
    from rag.ingest.embed_queue import claimable, queued

    if app.embedder is None:
        return  # full text only: vectors are not part of what is measured
    waiting = queued(app.db, owner_id)
    aside = waiting - claimable(app.db, owner_id) if waiting else 0
    if aside:
        raise NotReady(
            f"owner {owner!r} has {aside} chunks whose embedding kept failing (set aside; "
            "`rag stats` shows the error), and figures measured now would describe a "
            f"half-embedded corpus; fix the cause, run `rag embed --owner {owner} --retry-failed` "
            "and try again"
        )
    if waiting:
        raise NotReady(
            f"owner {owner!r} has {waiting} chunks still waiting for a vector, and figures "
            "measured now would describe a half-embedded corpus; run "
            f"`rag embed --owner {owner}` (or let `rag serve` finish: `rag stats` shows the "
            "progress) and try again"
        )


def retrieved_set(
    app: App, opts: dict[str, Any], *, use_profile: bool, progress: bool
) -> tuple[Any, ...]:
    """The set, an engine, the owner and one cached retrieval per case."""
    from rag.answer.engine import Engine
    from rag.errors import InputError
    from rag.eval.sets import corpus_owner, retrieve_all
    from rag.search.relevance import FilterParams

    evalset = evalset_from(
        opts["set_path"],
        opts["corpus"],
        opts["questions"],
        opts["noanswer"],
        opts["name"],
        opts["gold_map"],
        opts["split"],
        opts["tag_by"],
        opts["answer_field"],
        opts["withhold"],
    )
    if opts["profile"]:
        app.settings = app.settings.replace(profile=str(opts["profile"]))
    if not app.settings.embed_cache:
        # Evaluation re-embeds the same texts run after run: keep their vectors on disk.
        app.settings = app.settings.replace(embed_cache=str(app.settings.data_dir / "embed-cache"))
    settings = app.settings
    if opts["owner"]:
        owner, owner_id = opts["owner"], app.owner_id(opts["owner"])
        if owner_id is None:
            raise InputError(f"owner {owner!r} has no documents")
    else:
        owner, owner_id = corpus_owner(app.db, settings, app.embedder, evalset, progress=progress)
    refuse_half_embedded(app, owner, owner_id)
    params = None if use_profile else FilterParams.from_settings(settings)
    engine = Engine(app.db, settings, app.embedder, params=params)
    retrievals = retrieve_all(engine, owner_id, evalset.cases, progress=progress)
    return evalset, engine, owner, retrievals


def rate(value: float | None, num: int, den: int) -> str:
    return "  n/a" if value is None else f"{value:.3f} ({num}/{den})"


def num(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:.3f}"


def related(figures: dict[str, Any]) -> str:
    """A group's related answers: of its answerable cases + of its not_found cases."""
    return f"{figures['related']:>3}+{figures['related_no_answer']:<3}"


def print_report(report: Any, owner: str, profile: Path | None, show: int) -> None:
    """The human-readable ``rag eval`` output."""
    from rag.eval.metrics import retrieval_metrics

    f = report.figures
    click.echo(
        f"set {report.name}: {len(report.results)} cases ({f.answerable} answerable, "
        f"{f.no_answer} not_found), owner {owner}"
    )
    click.echo(f"profile: {profile or 'none (settings values)'}")
    for set_name, values in report.param_sets().items():
        click.echo(f"filter ({set_name}): " + ", ".join(f"{k}={v}" for k, v in values.items()))
    click.echo("\nretrieval (answerable cases)  hit@1  hit@5  MRR@10")
    for mode, m in retrieval_metrics(report.results).items():
        click.echo(f"  {mode:<27} {num(m['hit@1'])}  {num(m['hit@5'])}  {num(m['mrr@10'])}")
    click.echo("\nfull pipeline")
    click.echo(f"  answer recall   {rate(f.answer_recall, f.recalled, f.answerable)}")
    click.echo(f"  false answers   {rate(f.false_answer_rate, f.false_answers, f.no_answer)}")
    click.echo(f"  false refusals  {rate(f.false_refusal_rate, f.refused, f.answerable)}")
    click.echo(
        f"  related         {f.related}/{f.answerable} answerable ({f.related_listed} listing an "
        f"expected source), {f.related_no_answer}/{f.no_answer} not_found (no direct answer, "
        "sources listed)"
    )
    held = report.extractive()
    if held is not None:
        click.echo(
            f"  extractive answer holds the answer's text  "
            f"{rate(held['of_answerable'], held['held'], held['cases'])}; "
            f"of the cases answered with their gold source "
            f"{rate(held['of_recalled'], held['held'], held['recalled'])}"
        )
    tags = report.by_tag()
    if tags:
        click.echo("\nper tag            cases  recall  false-ans  related  hybrid hit@5")
        for tag, t in tags.items():
            click.echo(
                f"  {tag:<17} {t['cases']:>5}  {num(t['answer_recall'])}   "
                f"{num(t['false_answer_rate'])}      {related(t)}  {num(t['hybrid_hit@5'])}"
            )
    langs = report.by_lang()
    if len(langs) > 1 or any(t["thresholds"] != ["same"] for t in langs.values()):
        click.echo(
            "\nper language      cases  recall  false-ans  related  hybrid hit@5  thresholds"
        )
        for lang, t in langs.items():
            click.echo(
                f"  {lang:<15} {t['cases']:>5}  {num(t['answer_recall'])}   "
                f"{num(t['false_answer_rate'])}      {related(t)}  {num(t['hybrid_hit@5'])}"
                "         " + ", ".join(t["thresholds"])
            )
    failures = report.failures
    click.echo(f"\nfailed cases: {len(failures)}")
    for r in failures[:show]:
        print_failure(r)
    if len(failures) > show:
        click.echo(f"  ... {len(failures) - show} more (--show-failures, --json)")


def print_ablation(name: str, owner: str, profile: Path | None, base: Any, rows: Any) -> None:
    """The ``rag eval --ablate`` table: each row against the profile's own figures."""
    click.echo(
        f"set {name}: {base.answerable} answerable, {base.no_answer} not_found, owner {owner}"
    )
    click.echo(f"profile: {profile or 'none (settings values)'}")
    click.echo("\nablation           recall            false answers     related  changed  what")

    def line(label: str, f: Any, changed: str, what: str) -> None:
        click.echo(
            f"  {label:<17} {rate(f.answer_recall, f.recalled, f.answerable):<17} "
            f"{rate(f.false_answer_rate, f.false_answers, f.no_answer):<17} "
            f"{f.related:>3}+{f.related_no_answer:<3}  {changed:>7}  {what}"
        )

    line("profile", base, "-", "the profile in force")
    for row in rows:
        f = row.figures
        delta = f"{f.recalled - base.recalled:+d}/{f.false_answers - base.false_answers:+d}"
        line(row.name, f, str(row.changed), f"{row.what} (recall/false {delta})")


def print_failure(r: Any) -> None:
    expect = ", ".join(r.case.expect) or "not_found"
    click.echo(
        f"  {r.case.id} {r.outcome}: {r.case.question!r} expects {expect}; "
        f"sources {', '.join(r.sources) or 'none'}"
    )
    for e in r.evidence:
        dist = "-" if e["distance"] is None else f"{e['distance']:.4f}"
        margin = "-" if e["margin"] is None else f"{e['margin']:.4f}"
        pull = "" if e.get("pull") is None else f" pull {e['pull']:+.4f}"
        # admitted by a rule, refused by the answerability check named
        refused = (
            f", refused: {e['refused_by']}"
            if e["rule"] and not e["passed"] and e["refused_by"]
            else ""
        )
        click.echo(
            f"      #{e['position']} {e['source_id']} fts {e['fts_rank'] or '-'} vec "
            f"{e['vector_rank'] or '-'} dist {dist} margin {margin} cover "
            f"{e['coverage']:.2f} support {e['support']:.2f}{pull} "
            f"[{e['rule'] or 'no evidence'}{refused}] {' '.join(e['words'])}"
        )


@click.command("eval")
@set_options
@click.option(
    "--show-failures",
    default=25,
    show_default=True,
    type=click.IntRange(0),
    help="Failed cases printed with their evidence.",
)
@click.option(
    "--ablate",
    is_flag=True,
    help="Also judge the set with each rule or knob of the profile turned off, one at a time "
    "(rag.eval.ablation), and print what each one buys.",
)
@json_option
@pass_app
@fails_cleanly
def eval_command(app: App, show_failures: int, ablate: bool, as_json: bool, **opts: Any) -> None:
    """Measure retrieval and the full pipeline on a regression set or an external corpus."""
    from rag.eval.metrics import score

    evalset, engine, owner, retrievals = retrieved_set(app, opts, use_profile=True, progress=True)
    if ablate:
        from rag.eval.ablation import ablate as run_ablation

        report, rows = run_ablation(
            engine, evalset.label, evalset.cases, retrievals, engine.thresholds
        )
        if as_json:
            echo_json(
                {
                    "owner": owner,
                    "profile": engine.profile_path,
                    "set": evalset.label,
                    "pipeline": report.figures.as_dict(),
                    "ablations": [row.as_dict() for row in rows],
                }
            )
            return
        print_ablation(evalset.label, owner, engine.profile_path, report.figures, rows)
        return
    report = score(engine, evalset.label, evalset.cases, retrievals, engine.thresholds)
    if as_json:
        echo_json({"owner": owner, "profile": engine.profile_path, **report.as_dict()})
        return
    print_report(report, owner, engine.profile_path, show_failures)


# Added to the `rag` group by rag.cli.main.
COMMANDS = (eval_command,)
