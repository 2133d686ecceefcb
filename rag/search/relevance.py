"""The relevance filter: a candidate becomes a source only with evidence. Pure but for one read:
the stored sentence analyses of the candidates whose windows it looks for
(:class:`rag.search.retrieve.AnalysisReader`, one statement per judgement).

The rules below, any suffices:

* close vector: distance <= ``vector_max_distance`` and within ``vector_margin`` of the best
  candidate's distance;
* rare question words: the question's content words (stopwords and interrogatives out) that are
  rare in the owner's chunks (df <= max(``rare_df`` * chunks, ``rare_min_chunks``)) and occur in
  the candidate must cover MORE than ``min_coverage`` of the question. A content word that occurs
  nowhere in the corpus still counts in the denominator: that is what refuses "the green
  hummingbird of Litomyšl" when only "green" and "Litomyšl" are in the corpus.

* supported vector: a vector a little further off (distance <= ``support_max_distance``, still
  within ``vector_margin`` of the best) whose chunk also contains the question's words, common
  ones included, weighted by idf: their share must reach ``support_min_coverage``. Evidence from
  the two retrievers adds up: on the shipped regression set this rule recovers questions whose
  words are all common in a small corpus ("Kolik dní dovolené mám za rok?") without admitting
  off-topic questions, whose words are absent from the corpus.

  A set calibrated for questions in another language than the corpus may count anchors instead
  (``anchor_support``): the share of the question's identifiers, numbers and names that the
  candidate's best window holds across languages and scripts, with a token of the expected
  answer type (:mod:`rag.search.anchors`); a window holding ``anchor_min_share`` of them also stands in
  for names and codes the answerability stage missed by its keys (another script's spelling, a
  translated name). Its rule reads ``anchors``.

* known topic: a vector within ``topic_max_distance`` (and the margin) for a question most of
  whose content words (a share of at least ``topic_min_known``) occur somewhere in the owner's
  corpus. A paraphrase ("Můžu si do práce přivést svého mazlíčka?") shares no rare word with its
  answer but speaks the corpus's vocabulary; an off-topic question ("Jaké je počasí na Marsu?")
  does not, however close its nearest vector happens to be.

* both retrievers' first (``agreement``): a vector within ``support_max_distance`` whose chunk
  both lists put first; its window must answer, and no paraphrase stands in for its words.
  Where its window answers every check (the focus words and a token of the answer type), the
  chunk both lists put first agrees further off, up to ``agreement_max_distance``: the two
  rankers and the window then say the same, and the vector's distance measures the question's
  wording against the passage's ("Můžu za sebe na schůzi poslat někoho jiného?" over "smí
  poslat zástupce s písemnou plnou mocí", 0.19 away) more than whether the passage answers.
  Where the chunk first in either list does not answer (it speaks of the question's subject,
  not of what is asked: "Volejbalovou mládež trénuje ..." for "Kdy trénuje volejbalová
  přípravka?"), the chunk both lists put second agrees in its place when its window answers
  (:func:`agreed_second`): the two rankers' consensus among the chunks that answer.

* the question's kind alone (``kind``, with the answerability stage): a question with no word
  of its own but its kind ("Jaký máte e-mail?", "Kdy máte otevřeno?") asks the knowledge base
  for its own contact, hours or place. The first candidate of the fused lists whose window
  holds a token of that kind, within ``agreement_max_distance``, passes (``BARE_KINDS``: not
  an amount or a person, which "Kolik to stojí?" and "Kdo to je?" ask of something said
  before).

* the document (``document_rule``, with the answerability stage): a candidate no rule above
  admits passes when one of them admits another chunk of its document and its own evidence
  window answers the question. The admitted chunk says the document speaks of the question;
  the answer may sit in the next chunk (a manual's battery paragraph after the one naming the
  device). Its rule reads ``document``.

Coverage is either a count (``coverage_mode = "count"``: each word weighs 1) or idf-weighted
(``"idf"``: each word weighs its BM25 idf in the owner's chunks; a word absent from the corpus has
the largest idf). A word matched by its lemma or stem key earns full credit; one matched only by
its 4-character prefix earns ``prefix_credit`` (never a word absent from the corpus). The RRF score is never thresholded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from rag.language.answer_types import (
    PERSON_TYPES,
    AnswerType,
    aged,
    answer_type,
    asking_words,
    asks_for_a_rule,
    asks_through_a_shell,
    calendar_kin,
    frames_a_visit,
    framing,
    hypernym_keys,
    is_name,
    money_keys,
    named_day,
    named_month,
    names_a_part_of_day,
    names_a_season,
    names_a_time,
    names_money,
    names_paying,
    names_the_answer,
)
from rag.language.derivation import (
    asked_families,
    families,
    is_infinitive,
    verbs_named,
    written,
)
from rag.language.keys import unaccent
from rag.language.names import NAMED_KEY, relational_keys
from rag.language.question_keys import QueryWord
from rag.language.register import event_families, written_keys
from rag.search.anchors import AnchorEvidence, question_anchors
from rag.search.anchors import evidence as anchor_evidence
from rag.search.answerability import (
    Answerability,
    QuestionNeeds,
    assess,
    bare_employer,
    question_needs,
)
from rag.search.pull import PULL_OFF
from rag.search.retrieve import Candidate, Retrieval, read_analyses
from rag.search.word_evidence import QuestionWords, Word, WordEvidence, idf, met_as_family
from rag.settings import Settings


@dataclass(frozen=True, slots=True)
class FilterParams:
    """The calibrated knobs of the filter (one embedding model's thresholds)."""

    vector_max_distance: float
    vector_margin: float
    rare_df: float
    rare_min_chunks: int
    min_coverage: float
    coverage_mode: str = "idf"
    prefix_credit: float = 0.5
    support_max_distance: float = 0.0  # 0 turns the supported-vector rule off
    support_min_coverage: float = 0.5
    topic_max_distance: float = 0.0  # 0 turns the known-topic rule off
    topic_min_known: float = 0.6
    answer_window: int = 0  # sentences in an evidence window; 0 turns answerability off
    focus_words: int = 2
    paraphrase_max_distance: float = 0.0  # 0: a missing focus word always refuses
    # and the missing words' pull toward the candidate must be at least this (rag.search.pull):
    # a word that pushes the question away names something the passage does not have
    paraphrase_min_pull: float = PULL_OFF
    require_answer_type: bool = True
    # the supported-vector rule's evidence is the question's language-independent anchors
    # (identifiers, numbers, names: rag.search.anchors) instead of its words: for other-language sets
    anchor_support: bool = False
    # with it, a window holding this share of the anchors (and the answer type; 0: the type
    # alone) stands in for required names and codes the answerability stage missed by its keys
    anchor_min_share: float = 1.0
    # a candidate no rule admits passes when another chunk of its document is admitted by a
    # rule (the document speaks of the question) and its own window answers the question
    document_rule: bool = False
    # rarity and idf count the owner as at least this many chunks: in a knowledge base of three
    # chunks every word is in "a third of the corpus", and none would be rare
    stats_min_chunks: int = 1
    # the chunk both lists put first passes, its window answering every check, up to this
    # distance (0: up to support_max_distance, as the agreement does where its window does not)
    agreement_max_distance: float = 0.0

    @classmethod
    def from_settings(cls, s: Settings) -> FilterParams:
        """The knobs that are settings, by name; the rest (the anchor knobs, calibrated per
        language relation only) keep their defaults."""
        names = {f.name for f in fields(s)}
        return cls(**{name: getattr(s, name) for name in cls.__slots__ if name in names})

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__slots__}


# A close vector stands in for the question's missing focus words (the paraphrase rule) only
# for a passage within this distance of the closest one: the paraphrase of a question is the
# passage it is nearest to, and of two passages about as near the words decide. Whatever margin
# the other rules use (vector_margin), this one holds: without it, a passage 0.05 further off
# than the best would stand in for a place name typed in lower case ("v plzni").
PARAPHRASE_MARGIN = 0.01


@dataclass
class Judgement:
    """Why a candidate passed or not."""

    passed: bool
    rule: str | None  # "vector", "words", "support", "topic", "agreement", "kind" joined by "+"
    distance: float | None
    margin: float | None  # distance minus the best candidate's distance
    coverage: float  # rare words' share of the question
    words: list[WordEvidence] = field(default_factory=list)
    support: float = 0.0  # idf-weighted share of all question words in the chunk
    known: float = 0.0  # share of question words found anywhere in the corpus
    answer: Answerability | None = None  # the evidence window and its checks
    anchors: AnchorEvidence | None = None  # with anchor_support: the anchors a window holds
    # false: no rule could admit the candidate even by its whole chunk's words, so its evidence
    # window was not looked for (judge(complete=False)); coverage and support are the chunk's
    window_checked: bool = True
    # the missing focus words' pull toward the candidate, where the paraphrase rule asked for it
    pull: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "answerability": None if self.answer is None else self.answer.as_dict(),
            **({} if self.window_checked else {"window_checked": False}),
            "distance": self.distance,
            "margin": self.margin,
            "coverage": round(self.coverage, 4),
            "support": round(self.support, 4),
            "known": round(self.known, 4),
            **({} if self.anchors is None else {"anchors": list(self.anchors.held)}),
            **({} if self.pull is None else {"pull": round(self.pull, 4)}),
            "words": [
                {
                    "word": w.word,
                    "df": w.df,
                    "rare": w.rare,
                    "credit": w.credit,
                    "matched_by": w.matched_by,
                }
                for w in self.words
            ],
        }


def word_df(keys: tuple[str, ...] | list[str], key_df: dict[str, int]) -> int:
    """A word's document frequency: its most frequent lemma or stem key (prefixes excluded)."""
    return max((key_df.get(k, 0) for k in keys if k[0] in "ls"), default=0)


def judge(retrieval: Retrieval, params: FilterParams, *, complete: bool = True) -> list[Judgement]:
    """Judge every candidate of ``retrieval`` in order.

    Args:
        complete: find every candidate's evidence window. Without it, a candidate that no rule
            can admit even by the words of its whole chunk (an upper bound of its window's
            coverage and support) is refused without one: the verdicts are the same, its
            evidence has no window (``window_checked`` false), and a search at scale does not
            split and key the sentences of dozens of chunks nothing could admit. Calibration
            and evaluation read every window, so they ask for all.
    """
    n = max(retrieval.chunk_count, params.stats_min_chunks, 1)
    rare_limit = max(params.rare_df * n, params.rare_min_chunks)
    distances = [c.distance for c in retrieval.candidates if c.distance is not None]
    best = min(distances) if distances else None
    needs = None
    if params.answer_window > 0:
        needs = question_needs(
            retrieval.query,
            retrieval.form_keys,
            retrieval.key_df,
            n,
            params.focus_words,
        )
    lang = retrieval.query.lang
    # a daughter asked for by name is not any child ("Jak se jmenuje dcera ...?"): a kinship
    # noun's class counts where the question asks what may or must be done (answer_types)
    classed = (needs.answer_type if needs is not None else _answer_type(retrieval)) not in (
        PERSON_TYPES
    )
    # and a relative's family where it asks for a rule ("Smím půjčit notebook manželce?"), as
    # the answerability stage reads the question (by its words' lemmas and the form map's)
    for_a_rule = (
        needs.rule
        if needs is not None
        else asks_for_a_rule(
            [
                k[2:]
                for w in retrieval.query.all_words
                for k in (*w.keys, *retrieval.form_keys.get(w.form, []))
                if k[0] == "l"
            ],
            lang,
        )
    )
    words = []
    # the calendar times that answer for the question's (answer_types.calendar_kin): full text
    # did not look for them, so a window holding one counts it as it counts a family it holds
    calendar: set[str] = set()
    # the written words' lemmas of its spoken words ("šéf": "vedoucí", rag.language.register):
    # a window holding one holds the word; full text did not look for them either
    spoken: set[str] = set()
    content, named = content_words(retrieval)
    for w in (*content, *named):
        keys = [*w.keys, *retrieval.form_keys.get(w.form, [])]
        # a spoken word is as common as its written words are (rag.language.register)
        said = written_keys(w.surface, lang)
        df = word_df(keys + list(said), retrieval.key_df)
        weight = idf(df, n) if params.coverage_mode == "idf" else 1.0
        # its family keys ("f:žád" of "zažádám"): a window holding the family holds the word;
        # in a question for a place, the place of its action too ("zaparkovat": parkoviště),
        # in one for a person, the one who does it ("mluví": mluvčí)
        keys += families(w.surface, lang) + event_families(w.surface, lang)
        keys += relational_keys(w.surface, w.keys, df, lang)  # "brněnské": "Brně"
        # a calendar set's members ("víkendu": "v sobotu"), as the answerability stage reads them
        kin = calendar_kin([k[2:] for k in keys if k[0] == "l"], w.form)
        # what is paid ("zaplatíte": "jízdné", "hradíme"), as the answerability stage reads it:
        # not where a how-to question asks how one pays ("Jak zaplatím kurz?")
        if names_paying([k[2:] for k in w.keys if k[0] == "l"], w.form) and (
            needs is None or w.surface != needs.manner
        ):
            kin += money_keys(lang)
        keys += kin
        calendar.update(kin)
        if needs is not None:
            keys += asked_families(w.surface, needs.answer_type, lang)
        keys += said
        spoken.update(said)
        # a part of the day is said by a clock time as well ("večer": "do 22 hodin"), which no
        # key holds: evidence where a candidate has the word, no lack where it has not
        # and so is a season by months ("v zimě": "od listopadu do března"), a day of the week
        # by a span of days ("úterý": "pondělí až pátek"; by the word's own lemmas, not those of
        # its calendar set's members: "víkend" is held by "sobota" and "neděle" as keys), and
        # money by what it is ("peníze": "jízdné vám vrátíme")
        lemmas = [k[2:] for k in keys if k[0] == "l"]
        own = [k[2:] for k in (*w.keys, *retrieval.form_keys.get(w.form, [])) if k[0] == "l"]
        optional = (
            w in named
            or names_a_part_of_day(lemmas, w.form)
            or names_a_season(own, w.form)
            or named_day(own, lang) is not None
            # a month, in a question whether, by a span of months ("v prosinci": "od
            # listopadu do března"); a question for a time in it asks for a date the span
            # does not give ("Kdy začíná kurz v únoru?")
            or (
                named_month(own, lang) is not None
                and needs is not None
                and needs.answer_type is None
            )
            # money itself ("peníze" is rarely a passage's own word, and any sum would be
            # evidence of it); the paying of it is held by what is paid, as keys, above
            or names_money(own, w.form)
            # "desetiletý" is said by a range of years ("do 12 let"), which no key holds, and
            # "syn" by a rule for children: no evidence of the question's subject either way
            # (the answerability stage reads them)
            or aged(w.surface, lang) is not None
            or (classed and bool(hypernym_keys(own, w.form, lang, for_a_rule)))
        )
        words.append(Word(w.surface, tuple(keys), df, df <= rare_limit, weight, optional))
    counted = [w for w in words if not w.optional]
    known = sum(1 for w in counted if w.df > 0) / len(counted) if counted else 0.0
    related = frozenset(k for w in words for k in w.keys if met_as_family(k))
    windowed_keys = related.union(calendar, spoken)
    # a verb a window's participle names ("Vedoucí kroužku je ..." holds the "vede" of "Kdo vede
    # kroužek?"): the answerability stage counts it, full text does not index it
    verbs = frozenset(k for w in words for k in w.keys if k[0] == "l" and is_infinitive(k[2:]))
    weighed = QuestionWords(words, n, params.prefix_credit)
    # how each is spelled in a chunk's unaccented text: a family's root in its words' forms, a
    # name's first letters as they are, a written word's lemma less the ending's last letter
    # ("jizdenk" of "jízdenky"); a bound, the window's keys decide
    roots = {k: written(k) if k[0] == "f" else (k[len(NAMED_KEY) :],) for k in related}
    roots.update((k, (k[2:-1] if len(k) > 6 else k[2:],)) for k in spoken)
    # A question of nothing but its kind ("Jaký máte e-mail?", "Kdy máte otevřeno?") asks the
    # knowledge base for its own: the passage nearest to it answers when its window holds one.
    bare = (
        not counted
        and needs is not None
        and needs.answer_type in BARE_KINDS
        and not needs.required
        and not needs.focus
    )
    anchors = question_anchors(retrieval.query) if params.anchor_support else ()
    kind = None
    if anchors and params.require_answer_type:
        kind = needs.answer_type if needs is not None else _answer_type(retrieval)
    # Coverage and support only fall when the window's keys replace the chunk's (a word's
    # credit is 1, prefix_credit or 0 by its best key), so the chunk's bound the window's.
    bounded = not complete and 0.0 <= params.prefix_credit <= 1.0

    def closeness(c: Candidate) -> tuple[float | None, bool]:
        """The candidate's distance from the best one, and whether it is within the margin."""
        margin = None if c.distance is None or best is None else c.distance - best
        return (
            margin,
            c.distance is not None and margin is not None and margin <= params.vector_margin,
        )

    def refusal(c: Candidate) -> Judgement | None:
        """The candidate refused without its window, when no rule could admit it even by the
        words of its whole chunk; None: its window is looked for."""
        margin, near = closeness(c)
        # the chunk's keys bound its windows': a family the chunk may hold counts as held
        # (a family's root is written in a chunk that holds one of its words)
        # unaccented: a root's vowels lengthen and shorten in its forms (hlásit, nahlaste);
        # only the families of words the chunk's keys leave unmatched can add anything
        matched = frozenset(c.matched_keys)
        if verbs - matched:
            matched |= verbs & verbs_named(c.text, c.lang, verbs)
        ranks = weighed.ranks(matched)
        wanted = spoken.difference(matched)
        if roots and needs is not None:
            wanted |= weighed.unmatched_families(ranks)
        if wanted:
            plain = unaccent(c.text.lower())
            kin = {k for k in wanted if any(root in plain for root in roots.get(k, ()))}
            if kin:
                matched |= kin
                ranks = weighed.ranks(matched)
        evidence, coverage, support = weighed.evidence(ranks=ranks)
        # a calendar time the question asks for counts as held without reading the chunk (a
        # month or a day is spelled in many forms): for the bound only, not the evidence shown
        bound = weighed.evidence(matched | calendar)[1:] if calendar else (coverage, support)
        if _admissible(c, c.distance, near, known, *bound, params) or (
            bare and _near_enough(c, params)
        ):
            return None
        return Judgement(
            False,
            None,
            c.distance,
            margin,
            coverage,
            evidence,
            support,
            known,
            window_checked=False,
        )

    refused = [refusal(c) if bounded else None for c in retrieval.candidates]
    if needs is not None or params.anchor_support:
        # the chunks whose sentences are judged below: their stored analyses in one read
        read_analyses([c for c, r in zip(retrieval.candidates, refused, strict=True) if r is None])
    # every window first: whether the chunks first in the lists answer decides the agreement
    answers = [
        _window(c, needs, params) if r is None and needs is not None else None
        for c, r in zip(retrieval.candidates, refused, strict=True)
    ]
    second = agreed_second(retrieval.candidates, answers)
    # a question of nothing but its kind: the first candidate whose window holds one
    foremost = _foremost(retrieval.candidates, answers, params) if bare else None
    judgements = []
    for c, refused_by_chunk, answer in zip(retrieval.candidates, refused, answers, strict=True):
        if refused_by_chunk is not None:
            judgements.append(refused_by_chunk)
            continue
        held = None
        matched = frozenset(c.matched_keys)
        margin, near = closeness(c)
        if answer is not None:
            # Coverage and support count what the window holds, not what the chunk holds.
            matched = _window_matched(c, answer, windowed_keys, verbs)
        evidence, coverage, support = weighed.evidence(matched)
        if params.anchor_support:
            held, answer = _anchored(c, answer, needs, params, anchors, kind)
            support = held.share if held.typed else 0.0
        by_words = coverage > params.min_coverage
        by_vector = near and c.distance <= params.vector_max_distance  # type: ignore[operator]
        by_support = (
            near
            and c.distance <= params.support_max_distance  # type: ignore[operator]
            and support >= params.support_min_coverage
        )
        # both retrievers' first, a little further off: its own window must answer (no
        # paraphrase stands in for a focus word it lacks: the agreement is word evidence)
        by_agreement = (
            not params.anchor_support
            and near
            and (
                (
                    agreed(c)
                    and answer is not None
                    and answer.answers
                    and c.distance <= params.agreement_max_distance  # type: ignore[operator]
                )
                or (
                    c.distance <= params.support_max_distance  # type: ignore[operator]
                    and (agreed(c) or c is second)
                )
            )
        )
        by_kind = c is foremost
        by_topic = (
            near
            and c.distance <= params.topic_max_distance  # type: ignore[operator]
            and known >= params.topic_min_known
        )
        rule = (
            "+".join(
                r
                for r, ok in (
                    ("vector", by_vector),
                    ("words", by_words),
                    ("anchors" if params.anchor_support else "support", by_support),
                    ("topic", by_topic),
                    ("agreement", by_agreement),
                    ("kind", by_kind),
                )
                if ok
            )
            or None
        )
        passed = rule is not None
        pull = None
        if answer is not None and passed and not answer.answers:
            paraphrase = (
                answer.paraphrase
                and near
                and margin <= PARAPHRASE_MARGIN  # type: ignore[operator]
                and c.distance <= params.paraphrase_max_distance  # type: ignore[operator]
                and rule != "agreement"
            )
            if paraphrase:
                paraphrase, pull = pull_allows(retrieval, c, answer, params)
            passed = bool(paraphrase)
            if paraphrase:
                rule = f"{rule}+paraphrase"
        judgements.append(
            Judgement(
                passed,
                rule,
                c.distance,
                margin,
                coverage,
                evidence,
                support,
                known,
                answer,
                held,
                pull=pull,
            )
        )
    if params.document_rule and needs is not None:

        def windowed(
            c: Candidate, answer: Answerability
        ) -> tuple[list[WordEvidence], float, float]:
            """A skipped candidate's word evidence counted in its window, as above."""
            return weighed.evidence(_window_matched(c, answer, windowed_keys, verbs))

        _by_document(retrieval, judgements, needs, params, anchors, kind, windowed)
    return judgements


def content_words(retrieval: Retrieval) -> tuple[list[QueryWord], list[QueryWord]]:
    """The question's words the filter weighs, and those it weighs only where a candidate holds
    them.

    The first are its content words less the frame words ("mít", "dělat", "stát" of "Kolik
    mám dní dovolené?", "Co dělat při požáru?") and a verb of coming after a modal ("Můžu
    přijet bez objednání?"). A light verb frames the question and says
    nothing of its topic, so a passage need not hold it: the answerability stage already leaves
    it out of the focus (:func:`is_frame`), and the rules that count words must not count
    against a passage what the question only framed.

    The second name the kind of answer asked for: in a contact question the contact ("telefonní
    číslo"), in a price question the price or the purchase ("částka", "koupit"), in a question
    for a time the opening ("otevřeno"), the interrogative's own words ("daleko" of "Jak daleko
    ...?"). A passage gives the answer without them ("deset minut pěšky"), or with them
    ("Školka je otevřená od 6:30", "věž, vysoká 24 metrů"), and where it has them they are
    evidence. So does the bare noun by which the asker names their employer ("firma" of "Kolik
    mi firma dává na stravenky?"): the documents' author, whom the passage need not name."""
    q = retrieval.query
    lang = q.lang

    def lemmas_of(w: QueryWord) -> list[str]:
        return [k[2:] for k in (*w.keys, *retrieval.form_keys.get(w.form, ())) if k[0] == "l"]

    every = [lemma for w in q.all_words for lemma in lemmas_of(w)]
    forms = [w.form for w in q.all_words]
    # "telefonní číslo" of a contact question and "koupit" of a price question name the kind of
    # answer, as they do there; "daleko" of "Jak daleko ...?" is the interrogative's, as the
    # focus reads it (a surname Dlouhý is no "jak dlouhý")
    accented = not all(w.surface.isascii() for w in q.all_words)
    kind = answer_type(forms, every, lang)
    framed = framing(
        [(lemmas_of(w), w.form, w.surface if accented else None) for w in q.words], kind, lang
    )
    unframed = [
        w
        for w in q.words
        if w.form not in framed
        and not frames_a_visit(lemmas_of(w), forms, forms.index(w.form), lang)
    ]
    timed = any(names_a_time(lemmas_of(w), w.form) for w in q.all_words)
    shelled = asks_through_a_shell(forms, [lemmas_of(w) for w in q.all_words], lang)
    asking = interrogative_words(retrieval)
    named = [
        w
        for w in unframed
        if w in asking
        or names_the_answer(kind, lemmas_of(w), w.form, lang, timed, shelled)
        # "firma" of "Kolik mi firma dává na stravenky?": the documents' author
        or bare_employer(q.all_words, forms.index(w.form), lang)
    ]
    return [w for w in unframed if w not in named], named


def interrogative_words(retrieval: Retrieval) -> tuple[QueryWord, ...]:
    """The question's words of its interrogative phrase ("daleko" of "Jak daleko je to na
    vlak?", "vysoká" of "Jak vysoká je věž?"); a surname Dlouhý is no "jak dlouhý"."""
    q = retrieval.query
    forms = [w.form for w in q.all_words]
    asking = asking_words(forms, q.lang)
    if not asking:
        return ()
    position = {form: i for i, form in reversed(list(enumerate(forms)))}
    return tuple(
        w
        for w in q.words
        if w.form in asking and not is_name(w.surface, position.get(w.form, 0), q.lang)
    )


def missing_focus(answer: Answerability) -> tuple[str, ...]:
    """The focus words a window lacks whose pull is asked for, as the question writes them: not
    the verbs (rag.search.pull: a passage tells the same event in other verbs, and leaving the
    verb out of a question moves it as much as any word)."""
    return tuple(f["word"] for f in answer.focus if not f.get("matched_by") and not f.get("verb"))


def pull_allows(
    retrieval: Retrieval, c: Candidate, answer: Answerability, params: FilterParams
) -> tuple[bool, float | None]:
    """Whether the words ``c``'s window lacks pull the question toward it enough for a close
    vector to stand in for them, and their pull (None: not asked for, or not computable)."""
    if params.paraphrase_min_pull <= PULL_OFF or retrieval.pull is None:
        return True, None
    words = missing_focus(answer)
    if not words:
        return True, None
    pull = retrieval.pull([c.chunk_id], words).get(c.chunk_id)
    return pull is None or pull >= params.paraphrase_min_pull, pull


def _anchored(
    c: Candidate,
    answer: Answerability | None,
    needs: QuestionNeeds | None,
    params: FilterParams,
    anchors: Any,
    kind: AnswerType | None,
) -> tuple[AnchorEvidence, Answerability | None]:
    """The anchors the candidate's best window holds, and its answer with them standing in for
    names and codes the keys missed (another script's spelling, a translated name)."""
    asked = needs.asked if needs is not None else frozenset()
    held = anchor_evidence(
        c.text, c.lang, anchors, params.answer_window or 1, kind, asked, c.sentences()
    )
    if (
        answer is not None
        and answer.reason in ("absent", "required")
        and held.enough(params.anchor_min_share)
    ):
        answer = replace(answer, answers=True, reason=None)
    return held, answer


def _by_document(
    retrieval: Retrieval,
    judgements: list[Judgement],
    needs: QuestionNeeds,
    params: FilterParams,
    anchors: Any,
    kind: AnswerType | None,
    windowed: Callable[[Candidate, Answerability], tuple[list[WordEvidence], float, float]],
) -> None:
    """Admit, by rule ``document``, a candidate that no rule admits but whose own window answers
    the question, when a rule admits another chunk of its document.

    Chunk boundaries are the chunker's, not the author's: a manual's paragraph on a device's
    battery may follow the chunk that names the device, and a report's budget the chunk that
    names the project. The admitted chunk says the document speaks of the question; the
    answerability checks (required tokens, focus words, the answer type) are the candidate's own.
    """
    spoken = {
        c.document_id
        for c, j in zip(retrieval.candidates, judgements, strict=True)
        if j.rule is not None and "document" not in j.rule
    }
    eligible = [
        j.rule is None and c.document_id in spoken
        for c, j in zip(retrieval.candidates, judgements, strict=True)
    ]
    # the windows a live search skipped and this rule looks for: their analyses in one read
    read_analyses(
        [
            c
            for c, j, ok in zip(retrieval.candidates, judgements, eligible, strict=True)
            if ok and j.answer is None
        ]
    )
    for i, (c, j) in enumerate(zip(retrieval.candidates, judgements, strict=True)):
        if not eligible[i]:
            continue
        if j.answer is None:  # skipped by a live search: judged as a complete judgement would
            answer = _window(c, needs, params)
            words, coverage, support = windowed(c, answer)
            held = None
            if params.anchor_support:
                held, anchored = _anchored(c, answer, needs, params, anchors, kind)
                answer = anchored if anchored is not None else answer
                support = held.share if held.typed else 0.0
            j = replace(
                j,
                words=words,
                coverage=coverage,
                support=support,
                answer=answer,
                anchors=held,
                window_checked=True,
            )
        assert j.answer is not None
        judgements[i] = replace(j, passed=True, rule="document") if j.answer.answers else j


def _window_matched(
    c: Candidate, answer: Answerability, related: frozenset[str], verbs: frozenset[str]
) -> frozenset[str]:
    """The question's keys a candidate's window holds: the keys full text matched in the chunk
    that the window has, the question's family keys and its spoken words' written ones
    (``related``) the window has, and the question's lemma keys (``verbs``) a participle of the
    window names."""
    held = related.union(c.matched_keys)
    if answer.window is not None and verbs - held:
        start, end = answer.window
        held |= verbs & verbs_named(c.text[start:end], c.lang, verbs)
    return answer.window_keys & held


def _window(c: Candidate, needs: QuestionNeeds, params: FilterParams) -> Answerability:
    """The candidate's best evidence window, checked against the question's needs."""
    return assess(
        c.text,
        c.lang,
        needs,
        params.answer_window,
        params.require_answer_type,
        params.prefix_credit,
        c.title,
        c.sentences(),
    )


# The kinds of answer a question may ask for by its kind alone: a contact, a time, a place. Not
# an amount or a person: "Kolik to stojí?" and "Kdo to je?" point at something said before.
BARE_KINDS = frozenset({"contact", "email", "phone", "date", "time", "place"})


def _near_enough(c: Candidate, params: FilterParams) -> bool:
    """Within the distance both lists' first is held to (:func:`_foremost`)."""
    return c.distance is not None and c.distance <= params.agreement_max_distance


def _foremost(
    candidates: list[Candidate], answers: list[Answerability | None], params: FilterParams
) -> Candidate | None:
    """The first candidate of the fused lists whose window holds a token of the question's kind,
    within the distance both lists' first is held to, or None: a question of nothing but its
    kind ("Kde vás najdu?", "Na jaké číslo můžu zavolat?") has no word for full text to find,
    so the fused order is the vectors' and all the retrieval can say, and a short question
    lies further from every passage than one of many words. The knowledge base's own contact
    or hours may stand in a chunk of their own, not the nearest one ("Kontakt" after the rules
    of a one-document base)."""
    for c, answer in zip(candidates, answers, strict=True):
        if answer is not None and answer.answers and _near_enough(c, params):
            return c
    return None


def agreed(c: Candidate) -> bool:
    """Whether both retrievers put the candidate first: the best BM25 of the question's words
    is word evidence of its own, relative to the owner's other chunks, where a share of the
    question's words ("support") is an absolute one that a question in everyday words, or one
    the passage says in other words, never reaches ("Kdy se zkouší siréna?" over "Zkouška
    sirény probíhá ..."). It supports a vector as word support does."""
    return c.fts_rank == 1 and c.vector_rank == 1


def agreed_second(
    candidates: list[Candidate], answers: list[Answerability | None]
) -> Candidate | None:
    """The candidate both lists put second, when its window answers and the chunk first in each
    list was judged by its window and does not answer, or None. Both retrievers then agree on
    it among the chunks that answer, as :func:`agreed` on the first; further down, their
    consensus is weaker than the rules' evidence (a news claim's third chunk answered "mládež"
    by the first letters of "mladé")."""
    second = None
    for c, answer in zip(candidates, answers, strict=True):
        if c.fts_rank == 1 or c.vector_rank == 1:
            if answer is None or answer.answers:
                return None
        elif c.fts_rank == c.vector_rank == 2 and answer is not None and answer.answers:
            second = c
    return second


def _admissible(
    c: Candidate,
    distance: float | None,
    near: bool,
    known: float,
    coverage: float,
    support: float,
    params: FilterParams,
) -> bool:
    """Whether any rule could admit a candidate: the vector rules as :func:`judge` applies them,
    the word rules with the whole chunk's coverage and support (at least any window's)."""
    if coverage > params.min_coverage:
        return True
    if not near or distance is None:
        return False
    return (
        # both lists' first, where its window answers (judge)
        (agreed(c) and distance <= params.agreement_max_distance)
        or distance <= params.vector_max_distance
        or (distance <= params.topic_max_distance and known >= params.topic_min_known)
        or (
            distance <= params.support_max_distance
            # anchor support is read from the text, not the keys: no bound without reading it
            and (
                params.anchor_support
                or support >= params.support_min_coverage
                or agreed(c)
                or c.fts_rank == c.vector_rank == 2  # may agree as the second (agreed_second)
            )
        )
    )


def _answer_type(retrieval: Retrieval) -> AnswerType | None:
    """The question's expected answer type when the answerability stage is off."""
    q = retrieval.query
    lemmas = [k[2:] for w in q.all_words for k in w.keys if k[0] == "l"]
    return answer_type((w.form for w in q.all_words), lemmas, q.lang)
