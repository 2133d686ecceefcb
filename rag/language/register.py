"""Words of spoken Czech and the written words a team's documents use for them.

People type in chat as they speak: "Kdo je šéf IT?" over the handbook's "Vedoucí IT je ...",
"Je oběd první den zadarmo?" over "První oběd je zdarma", "Můžu si vzít pití?" over "Nápoje
vlastní ...". Colloquial Czech (obecná čeština and the everyday speech of offices) has its own
words for many things the written language names otherwise: loanwords (šéf, mítink), expressive
and familiar forms (brácha, táta, kafe), clipped and suffixed words (foťák, hoďka). A lemmatizer
joins a word's inflected forms, and :mod:`rag.language.derivation` a word's derivations; neither
joins two words, and a spoken word is rarely in the documents at all.

So a question's spoken word also asks for the lemmas of its written words (the table below), as
a focus word asks for its family: a window that says it in the written word answers. The table is
the register's: each row is a word a speaker uses where the written language has another, with
one sense in everyday use; words whose other senses are common ("guma": rubber and tyre,
"prachy": money and dust, "kačka": a crown and a duck) are left out, and so are synonyms of one
register ("kantýna" and "jídelna" are both written words, and a team's documents may use either
for different places). The written side is one word, the one that carries the sense ("školka":
"mateřská"). Only the question's side: documents are written in the written language.

A second table holds the verbs of Czech that say an event of nature without a subject ("Hoří!",
"Prší.", "Sněží."; bezpodmětá slovesa, a closed class of the grammar): a question asks "Co dělat,
když hoří?", and a document names the event by its noun, which has another root ("Při požáru
...", "Za deště ..."), so that no derivation joins them. Each row gives the noun.

A question word is the tables' by a lemma of its or by its Snowball stem, where the stem is
long enough to be no other word's (five letters): "šéfa" is "šéf" by its lemma, "bráchovi" is
"brácha" by its stem. A listed form counts by its lemma only where the dictionary reads it as
itself: it reads "dovolenka" as a form of "dovolit", which must not ask for a holiday.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from rag.language.derivation import families, participle_verb
from rag.language.keys import analyze_word, unaccent

# Spoken words (several forms where the dictionary lacks the word and its forms do not share a
# stem) : the written words for them.
_SPOKEN = {
    "cs": """
        šéf šéfová: vedoucí ředitel ředitelka nadřízený nadřízená
        šéfovat šéfuje šéfují šéfoval šéfovala: vést řídit vedoucí
        mítink meeting: porada schůzka schůze
        deadline: termín lhůta
        mejl mail: e-mail
        esemeska: SMS
        mobil mobilu mobilem: telefon
        noťas noťasu: notebook
        foťák foťáku: fotoaparát
        fotit vyfotit: fotografovat vyfotografovat
        telka telky: televize
        kafe kafíčko: káva
        pití: nápoj
        záchod záchodky: toaleta WC
        lednička: lednice chladnička
        mrazák mrazáku: mraznička
        šuplík: zásuvka
        flaška: láhev
        kancl: kancelář
        šichta: směna
        služebka: cesta
        výplata: mzda plat
        neschopenka neschopenku: neschopnost
        dovča dovolenka dovolenku: dovolená
        zadarmo: zdarma
        zpátky: zpět
        lístek: jízdenka vstupenka
        taxík: taxi
        doktor: lékař
        doktorka: lékařka
        zubař zubařka: stomatolog
        fotka: fotografie
        školka: mateřská
        brácha: bratr
        ségra: sestra
        táta taťka: otec
        máma mamka: matka
        děcko děcka: dítě
        kluk: chlapec
        holka: dívka
        kámoš kamoš kámoška: kamarád kamarádka
        pejsek pejska: pes
        matika: matematika
        hoďka hoďku: hodina
        kilák kiláků: kilometr
        kilo: kilogram
        kubík: krychlový
    """,
}
# Verbs of an event of nature, said without a subject : the noun of the event.
_EVENTS = {
    "cs": """
        hořet: požár
        pršet: déšť
        sněžit: sníh
        hřmít hřmí: bouřka
    """,
}
_MIN_STEM = 5  # a shorter stem is another word's too ("máma": mít)
_LEMMA_KEY = "l:"  # the key of a lemma, as a sentence holds it


def _rows(
    lang: str, tables: tuple[dict[str, str], ...] = (_SPOKEN, _EVENTS)
) -> list[tuple[frozenset[str], frozenset[str], tuple[str, ...]]]:
    rows = []
    lines = [line for table in tables for line in table.get(lang, "").strip().splitlines()]
    for line in lines:
        spoken, written = line.split(":")
        lemmas: set[str] = set()
        stems: set[str] = set()
        for form in spoken.split():
            token = analyze_word(form, lang)
            if token is None:
                continue
            lemmas.update(lemma for lemma in token.lemmas if lemma == unaccent(form.lower()))
            if len(token.stem) >= _MIN_STEM:
                stems.add(token.stem)
        rows.append((frozenset(lemmas), frozenset(stems), tuple(written.split())))
    return rows


@lru_cache(maxsize=8)
def _index(lang: str) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    return _indexed(_rows(lang))


@lru_cache(maxsize=8)
def _events_index(lang: str) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    return _indexed(_rows(lang, (_EVENTS,)))


def _indexed(
    rows: list[tuple[frozenset[str], frozenset[str], tuple[str, ...]]],
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    by_lemma: dict[str, tuple[str, ...]] = {}
    by_stem: dict[str, tuple[str, ...]] = {}
    for lemmas, stems, written in rows:
        for lemma in lemmas:
            by_lemma[lemma] = by_lemma.get(lemma, ()) + written
        for stem in stems:
            by_stem[stem] = by_stem.get(stem, ()) + written
    return by_lemma, by_stem


def _looked_up(
    surface: str, lang: str, index: tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]
) -> tuple[str, ...]:
    """The words ``index`` gives a question word by its lemmas and its stem."""
    token = analyze_word(surface, lang)
    if token is None or token.stop:
        return ()
    by_lemma, by_stem = index
    found = [w for lemma in token.lemmas for w in by_lemma.get(lemma, ())]
    found += by_stem.get(token.stem, ())
    return tuple(dict.fromkeys(found))


def written_words(surface: str, lang: str) -> tuple[str, ...]:
    """The written words for a spoken word of a question, or the noun for a verb of an event of
    nature (none for any other word)."""
    return _looked_up(surface, lang, _index(lang)) if lang in _SPOKEN or lang in _EVENTS else ()


@lru_cache(maxsize=4096)
def written_keys(surface: str, lang: str) -> tuple[str, ...]:
    """The lemma keys a window may say a question's spoken word in (``l:vedouci`` for "šéf"; a
    participle's verb too, ``l:vest``: "Účtárnu vede ...")."""
    out: dict[str, None] = {}
    for word in written_words(surface, lang):
        token = analyze_word(word, lang)
        if token is not None:
            out.update(dict.fromkeys(_LEMMA_KEY + lemma for lemma in token.lemmas))
        if (verb := participle_verb(word, lang)) is not None:
            out[verb] = None
    return tuple(out)


@lru_cache(maxsize=4096)
def event_families(surface: str, lang: str) -> tuple[str, ...]:
    """The family keys of the noun a verb of an event of nature is said by ("hoří": the
    "f:požar" of "požár" and "Požární poplach ..."), none for any other word: a window holding
    the noun's family holds the event, as one holding a question word's family holds the word."""
    if lang not in _EVENTS:
        return ()
    nouns = _looked_up(surface, lang, _events_index(lang))
    return tuple(dict.fromkeys(k for noun in nouns for k in families(noun, lang)))


def spoken_keys(surfaces: Iterable[str], lang: str) -> tuple[str, ...]:
    """The written words' keys of every spoken word among a question's ``surfaces``."""
    out: dict[str, None] = {}
    for surface in surfaces:
        out.update(dict.fromkeys(written_keys(surface, lang)))
    return tuple(out)
