"""Word families: a verb, its noun and its adjective share a derivational root.

A Czech question asks in a verb what a passage says in a noun ("Jak si zažádám o dovolenou?" over
"Žádost o dovolenou podáváte v aplikaci"), or in a noun what the passage says in an adjective
("Co dělat při požáru?" over "Požární poplach ..."). The lemmatizer joins inflected forms of one
word, never two words of one family. Czech word formation is regular enough to undo by its
suffixes: verbal nouns (-ní, -ení, -ání, -ování: parkovat / parkování), abstract nouns (-ost:
žádat / žádost), action nouns (-ba, -ávka, -ace: platit / platba, objednat / objednávka,
rezervovat / rezervace), relational adjectives (-ní, -ový, -ský: požár / požární) and the
infinitive's own endings. These derivations say the same event or property in another word
class; those that name another thing are left out: a place (knihovna is no kniha, parkoviště
no parking), an agent (učitel), a collective or a diminutive. A verb also yields its root without an aspectual prefix (zažádat,
požádat: žádat), since a perfective verb's noun is often its imperfective's (žádost). That joins
a prefixed word to the root's unprefixed words only, never to a word of another prefix: a prefix
makes a verb of its own (vydělat is to earn, oddělit to separate, přihlásit to register,
nahlásit to report), and only the prefixless word is the pair's common member. So a passage's
prefixed word holds its root marked as stripped (``f:-děl``), which a question's unprefixed word
asks for and a question's prefixed word does not (:func:`held_families`, :func:`families`).

The root is taken from the accented lemma: unaccented, "žád-" (to ask) and "zad-" (to assign)
would be one. What Czech alternates between the derivations of one root is made plain: the last
consonant (přihlásit / přihláška, hlásit / hlášení), a vowel's length (ztratit / ztráta,
přihlašovat / přihlásit) and the -ír- of the imperfectives of -řít verbs (otevřít / otevírat);
"ě" and the other consonants keep their accents. A root shorter than three letters is no
evidence (a short word's ending is most of it), and neither is a word shorter than five letters.
One suffix is removed, the longest that leaves such a root; the table is the grammar's, not
fitted to a set of questions.

Czech has a table, and Russian one by the same grammar (победитель / победить / победа, создание /
создать, организация / организовать), where a prefix is taken off only when the verb without
it is a word of the dictionary; other languages get no family keys.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rag.language.keys import analyze_word, unaccent
from rag.language.lemmas import conjugated_lemma, dictionary_words, lemma_candidates

FAMILY_KEY = "f:"  # a family root as a key (sentence keys, question needs)
_STRIPPED = "-"  # marks a root whose aspectual prefix was removed, in a passage's keys
_PLACE = "@"  # marks the root of a place noun in -iště (parkoviště), in a passage's keys
_AGENT = "%"  # marks the root of an agent noun (mluvčí, provozovatel), in a passage's keys

_MIN_WORD = 5
_MIN_ROOT = 3
# "-ka" also ends short nouns whose rest is no root of theirs (matka, kočka): it needs a longer
# one, and no noun of its own in "-a" or "-o" (_denominal)
_LONG_ROOT = {"ka": 4}
# A root's last consonant alternates between a word's derivations (přihlásit / přihláška,
# hlásit / hlášení, vozit / vožení, točit / otáčet, vrátit / vracet leaves c/t aside): the
# palatal of each pair stands for its plain consonant, so that one root is one key. Only the
# final consonant: "žád-" and "zad-" stay apart.
_ALTERNATION = str.maketrans({"š": "s", "ž": "z", "č": "c", "ř": "r", "ť": "t", "ď": "d", "ň": "n"})
# A root's vowel lengthens and shortens between the derivations of one word (ztratit / ztráta,
# hlásit / hlas, psát / písař): a long vowel stands for its short one. Only length: "ě" and the
# consonants keep the accents that tell roots apart (žád- and zad- stay two).
_QUANTITY = str.maketrans({"á": "a", "é": "e", "í": "i", "ý": "y", "ú": "u", "ů": "u"})
_VOWELS = frozenset("aeiouyáéíóúůýě")

# (suffix, verbal): verbal endings also strip an aspectual prefix. Longest first within the
# table; an infinitive's ending is removed from a lemma, a finite verb's only from a word the
# dictionary does not know (its lemma is the word itself: "zažádám").
_SUFFIXES: dict[str, tuple[tuple[str, bool], ...]] = {
    "cs": (
        # verbal nouns
        ("ování", True),
        ("ávání", True),
        ("ívání", True),
        ("ání", True),
        ("ení", True),
        ("ění", True),
        # verbal nouns in -tí of -nout, -át, -ít, -ýt and -out verbs (zapnout / zapnutí,
        # přehřát / přehřátí, použít / použití, zakrýt / zakrytí)
        ("nutí", True),
        ("átí", True),
        ("ití", True),
        ("ytí", True),
        ("utí", True),
        # infinitives
        ("ovat", True),
        ("ávat", True),
        ("ívat", True),
        ("nout", True),
        ("out", True),
        ("at", True),
        ("át", True),
        ("et", True),
        ("ět", True),
        ("it", True),
        ("ít", True),
        ("ýt", True),
        # passive participles (otevřený, vybraný: otevřít, vybrat); a participle keeps its
        # prefix, as an adjective does (povolený is no "volat")
        ("ený", False),
        ("ěný", False),
        ("aný", False),
        # and those in -tý of the verbs whose verbal noun ends in -tí (zapnutý, přehřátý,
        # použitý, zakrytý)
        ("nutý", False),
        ("átý", False),
        ("itý", False),
        ("ytý", False),
        ("utý", False),
        # abstract and action nouns
        ("ství", False),
        # an -ost noun of an adjective in -ný / -ní keeps the adjective's root (bezpečnost /
        # bezpečný, možnost / možný, vlastnost / vlastní), and so does its own adjective
        # (bezpečnostní)
        ("nostní", False),
        ("nost", False),
        ("ost", False),
        ("ávka", False),
        ("ka", False),  # action and result nouns (zkoušet / zkouška): a root of 4 letters or more
        ("ace", False),
        ("ba", False),
        # relational adjectives, those of -ost nouns too (pohotovost / pohotovostní)
        ("ostní", False),
        ("ební", False),
        ("ační", False),
        ("ový", False),
        ("ský", False),
        ("cký", False),
        ("ní", False),
        ("ný", False),
        # the fees named after what they pay for (školné of škola, poštovné of pošta, jízdné
        # of jízda, nájemné of nájem): a lemma in -né is such a noun, an adjective's is in -ný
        ("ovné", False),
        ("né", False),
        # an adjective of purpose and a passive participle of an -ovat verb hold the verb's
        # root (parkovací / parkovat, rezervovaný / rezervovat), as its -ování noun does
        ("ovací", False),
        ("ovaný", False),
        ("ací", False),
        ("ící", False),
        # a noun's own nominative ending ("oprava" / "opravit"), and an adverb's of its adjective
        # (hotově / hotovost, týdně / týdenní)
        ("a", False),
        ("e", False),
        ("ě", False),
        ("o", False),
    ),
    # Russian by the same grammar: verbal nouns, infinitives (reflexive ones too), agent and
    # abstract nouns, the -ация nouns of -овать verbs, relational adjectives and the noun's own
    # ending (победитель / победить / победа, создание / создать, организация / организовать)
    "ru": (
        ("ование", True),
        ("ение", True),
        ("ание", True),
        ("яние", True),
        ("оваться", True),
        ("аться", True),
        ("яться", True),
        ("еться", True),
        ("иться", True),
        ("овать", True),
        ("евать", True),
        ("ивать", True),
        ("ывать", True),
        ("нуть", True),
        ("ать", True),
        ("ять", True),
        ("еть", True),
        ("ить", True),
        ("итель", False),
        ("атель", False),
        ("ство", False),
        ("ость", False),
        ("ация", False),
        ("ный", False),
        ("ной", False),
        ("ский", False),
        ("ской", False),
        ("овый", False),
        ("а", False),
        ("я", False),
        ("о", False),
    ),
}
_FINITE: dict[str, tuple[str, ...]] = {
    # the present of -ovat, -at and -át verbs, and the third persons of -et verbs (přehřeje,
    # vracejí)
    "cs": ("ujeme", "ujete", "ují", "uji", "uje", "áme", "áte", "ají", "ám", "áš", "eje", "ejí"),
}
# Languages whose prefix is taken off only when the verb without it is a word of the dictionary:
# a Russian verb's first syllable is often a prefix's letters and none (победить, посетить).
_PREFIXED_WORD_NEEDED = frozenset({"ru"})
_PREFIXES: dict[str, tuple[str, ...]] = {
    # longest first: "před" before "pře", whose letters it begins with (předplatit is před- and
    # platit, no pře- and "dplatit")
    "cs": (
        "před",
        "pře",
        "při",
        "pro",
        "roz",
        "nad",
        "pod",
        "ode",
        "za",
        "po",
        "vy",
        "na",
        "od",
        "do",
        "ob",
    ),
    "ru": ("пере", "под", "над", "раз", "рас", "при", "про", "по", "за", "на", "вы", "от", "до"),
}
# A Czech adjective in bez- says "without" its noun (bezlepkový: bez lepku, bezdrátový: bez
# drátu, bezbariérový: bez bariér, bezhotovostní: bez hotovosti), so the noun's root is its
# family's as an aspectual prefix's verb is: a passage's "bezlepková jídla" speaks of "lepek"
# and a question's "bez lepku" of "bezlepkový". The noun must be a word of the dictionary (no
# "pečnost" in bezpečnostní, the adjective of bezpečnost), and a rest of three letters is too
# often another word's root (bezpečný: pec, bezvadný: vad), so the rest needs four.
_PRIVATIVE = {"cs": ("bez", ("ový", "ní", "ný", "ský", "cký", "ostní"))}
_PRIVATIVE_ROOT = 4
# the noun's nominative after the rest: none, a gender's ending, -ost, or a mobile "e" before
# the last consonant (lepek: lepkový)
_NOUN_ENDS = ("", "a", "o", "e", "ost")


@lru_cache(maxsize=65536)
def _roots(surface: str, lang: str) -> tuple[str, str | None]:
    """A word's family root ("" for a short word or a language without a table) and, for a verb
    with an aspectual prefix, its root without it.

    A short form of a longer lemma holds the lemma's root when that root has four letters or
    more: the genitive plural without an ending of a noun in -a or -o ("návštěvy škol" of škola,
    "počet míst" of místo, "tříd", "cest") meets "školní" and "místní" as its other forms do. A
    root of three letters stands for no family of a short form ("hoř" of hoří is also horní's)."""
    word = surface.lower()
    if len(word) >= _MIN_WORD:
        return _word_roots(surface, lang)
    lemma = (lemma_candidates(surface, lang, False) or [word])[0]
    if len(lemma) < _MIN_WORD:
        return "", None
    root, bare = _word_roots(surface, lang)
    return (root, bare) if len(root) > _MIN_ROOT else ("", None)


def _word_roots(surface: str, lang: str) -> tuple[str, str | None]:
    suffixes = _SUFFIXES.get(lang)
    word = surface.lower()
    if suffixes is None or not word.isalpha():
        return "", None
    lemma = (lemma_candidates(surface, lang, False) or [word])[0].lower()
    root, verbal = _strip(lemma, suffixes)
    ending = lemma[len(root) :]
    if lang == "cs" and ending == "ě" and root.endswith("n"):
        # an adverb as its adjective: bezpečně of bezpečný, osobně of osobní; a noun in -ně is
        # none, though its genitive plural ends as an adjective (snídaní of snídaně, kuchyní of
        # kuchyně): such a form is the noun's own, not a word of its family
        adjective = next(
            (
                e
                for e in ("ý", "í")
                if _known(root + e, lang) and lemma_candidates(root + e, lang, False)[0] != lemma
            ),
            None,
        )
        if adjective is not None:
            root, ending = root[:-1], "n" + adjective
    if (motion := _motion_root(lemma, lang)) is not None:
        root, verbal, ending = motion, True, ""  # odjet / odjezd, přijít / příchod
    elif (alternating := _alternating_root(lemma, lang)) is not None:
        # přivést / přivádět / přívod, přijmout / přijímat / přijetí: one root, whose prefix
        # stays (převést is to transfer, provést to carry out, vést to lead)
        return _plain_vowels(alternating, lang), None
    if lemma.endswith("ka") and root == lemma[:-2] and _denominal(root, lang):
        root = lemma[:-1]  # a noun's derivative (školka of škola): only its ending goes
    if lang == "cs" and lemma.endswith("oba") and _known(lemma[:-3] + "ovat", lang):
        # the noun in -oba of an -ovat verb (žaloba of žalovat, obhajoba of obhajovat); in
        # other nouns the "ob" is the root's own (podoba, ozdoba, výroba)
        root = lemma[:-3]
    if lemma == word:
        # a word the dictionary does not know: a finite verb's ending goes before a shorter
        # noun's ("přehřeje" is přehř-eje, not přehřej-e)
        for finite in _FINITE.get(lang, ()):
            if (
                word.endswith(finite)
                and len(word) - len(finite) >= _MIN_ROOT
                and len(finite) > len(lemma) - len(root)
            ):
                root, verbal, ending = word[: -len(finite)], True, finite
                break
    if (stem := _participle_stem(lemma, lang)) is not None:
        root, verbal = stem, True  # prasklý / prasknout
    elif not verbal and (made := _deverbal_root(lemma, root, lang)) is not None:
        root, verbal = made, True  # výměna / vyměnit, prodej / prodat
    if not verbal and ending not in _IOTATED and not ending.startswith("ova"):
        # a participle's root is its verb's, and so is the root before an -ovat verb's "-ova-"
        # (jmenovaný, jmenovat): no mobile "e"
        root = _fixed_e(root, lang)
    if ending in _IOTATED and lang == "cs":
        root = _iotated(root)
    elif not verbal and lang == "cs":
        root = _velar_ch(root, ending)
    root = _plain_end(root)
    privative = _PRIVATIVE.get(lang)
    if (
        privative is not None
        and not verbal
        and ending in privative[1]
        and root.startswith(privative[0])
        and len(root) - len(privative[0]) >= _PRIVATIVE_ROOT
        and _privative_noun(root[len(privative[0]) :], lang)
    ):
        return _plain_vowels(root, lang), _plain_vowels(root[len(privative[0]) :], lang)
    if verbal:
        for prefix in _PREFIXES.get(lang, ()):
            if root.startswith(prefix) and len(root) - len(prefix) >= _MIN_ROOT:
                if lang in _PREFIXED_WORD_NEEDED and not _known(lemma[len(prefix) :], lang):
                    break  # победить is no по- of "бедить"
                bare = _plain_vowels(root[len(prefix) :], lang)
                return _plain_vowels(root, lang), bare if len(bare) >= _MIN_ROOT else None
    return _plain_vowels(root, lang), None


def _privative_noun(rest: str, lang: str) -> bool:
    """Whether a bez- adjective's rest (lepk, bariér, hotov) is a noun of the dictionary: a
    word of its own, not another's form (pečen is péct's)."""
    nouns = [rest + e for e in _NOUN_ENDS]
    nouns.append(rest[:-1] + "e" + rest[-1])
    return any(_own_word(n, lang) for n in nouns)


# The prefixed verbs of the two verbs of motion whose nouns are made from another stem, their
# iterative's: jet / jezdit (odjet / odjezd, přijet / příjezd, vjet / vjezd) and jít / chodit
# (přijít / příchod, odejít / odchod, vejít / vchod). Of jít only the prefixes whose noun still
# names the motion: záchod, obchod and pochod name other things than zajít, obejít and pojít.
_MOTION: dict[str, dict[str, str]] = {
    "cs": {
        **{
            prefix + "jet": prefix + "jezd"
            for prefix in ("při", "od", "v", "vy", "s", "do", "za", "na", "ob", "pře", "roz")
        },
        "přijít": "přichod",
        "odejít": "odchod",
        "vejít": "vchod",
        "vyjít": "vychod",
        "přejít": "přechod",
    },
}


# A noun made from a prefixed verb lengthens the prefix's vowel (vyměnit / výměna, zakázat /
# zákaz, nastoupit / nástup); the nouns of dát's compounds end in -dej (prodat / prodej, vydat /
# výdej), and the verbs end in one of these infinitive endings.
_LONG_PREFIXES = (("vý", "vy"), ("zá", "za"), ("ná", "na"))
_VERB_ENDINGS = ("it", "at", "et", "ět", "ovat")


def _deverbal_root(lemma: str, root: str, lang: str) -> str | None:
    """The root of a noun made from a verb with an aspectual prefix, spelled as the verb's
    (výměna: vyměn, zákaz: zakaz, výdej: vyd, prodej: prod), or None: the verb is not in the
    dictionary (zákon, zápas), the noun has no long prefix and is no -dej noun, or the language
    has no table. The root is then a verb's, whose prefix comes off for an unprefixed word of
    the family (měnit: výměna)."""
    if lang != "cs":
        return None
    dej = lemma.endswith("dej") and len(lemma) > len("dej")
    if dej:
        root = lemma[: -len("ej")]
    long = next((p for p in _LONG_PREFIXES if root.startswith(p[0])), None)
    if long is not None:
        root = long[1] + root[len(long[0]) :]
    elif not (dej and any(root.startswith(p) for p in _PREFIXES[lang])):
        # a noun with a short prefix often names another thing than its verb: obchod is no
        # obcházení, podnik no podniknutí, doprava no dopravení
        return None
    for stem in dict.fromkeys((root, _lengthened(root))):
        if any(_known(stem + e, lang) for e in _VERB_ENDINGS):
            return root
    return None


def _motion_root(lemma: str, lang: str) -> str | None:
    """The root of a prefixed verb of motion, spelled as its noun's (odjet: odjezd), or None."""
    return _MOTION.get(lang, {}).get(lemma)


# The verbs whose stem alternates between their derivations, as the grammar lists them: the
# determinate verbs of carrying and leading (vést, nést, vézt), whose prefixed imperfectives
# lengthen and soften the stem (přivést / přivádět, přinést / přinášet, odvézt / odvážet), and
# the verbs in -jmout, whose imperfective, verbal noun and participle are made from other stems
# (přijmout / přijímat / přijetí / přijatý), the verbs in -mknout, whose imperfective
# inserts a vowel the perfective lacks (zamknout / zamykat, odemknout / odemykat), and the
# verbs whose "u" is "ou" in one aspect or its noun, the long "u" of older Czech (koupit /
# kupovat, domluvit / domlouvat, smluvit / smlouva), beside koupat (to bathe), which keeps its
# "ou" and stays apart. Every derivation of a prefixed one holds one root,
# the verb's stem with its prefix (přived, přijm). The nouns of vést and vézt are made from
# the iterative stem (převod, dovoz), as those of jet and jít are (odjezd): they hold the
# verb's root too, with the prefixes whose noun names the action (převést / převod, odvézt /
# odvoz), and not with those whose noun names another thing: závod (a race) is no zavést,
# obvod (a district) no obvést, svod (a gutter) no svést, přívoz (a ferry) no přivézt. The
# nouns of nést are left apart (přínos is a benefit, výnos a yield, donos a denunciation).
# (stem of the root, the lemma endings that hold it, the noun's stem or "", the prefixes)
_ALTERNATING: dict[str, tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...]] = {
    "cs": (
        (
            "ved",
            ("vést", "vádět", "vedení", "vádění", "vedený"),
            "vod",
            ("pře", "při", "pro", "roz", "pod", "od", "vy", "na", "do", "za", "ob", "u", "s"),
        ),
        (
            "nes",
            ("nést", "nášet", "nesení", "nášení", "nesený"),
            "",
            ("pře", "při", "roz", "od", "vy", "na", "za", "do", "u", "s"),
        ),
        (
            "vez",
            ("vézt", "vážet", "vezení", "vezený"),
            "voz",
            ("pře", "při", "roz", "od", "vy", "na", "do", "za", "s"),
        ),
        (
            "jm",
            ("jmout", "jímat", "jímání", "jímací", "jetí", "jatý"),
            "",
            ("prona", "pře", "při", "pro", "od", "vy", "na", "po", "u"),
        ),
        (
            "mk",
            ("mknout", "mykat", "mykání", "mknutí", "mčený"),
            "",
            ("ode", "za", "při", "se", "vy"),
        ),
        (
            "kup",
            ("koupit", "kupovat", "koupení", "kupování", "koupený", "koupě"),
            "",
            ("", "na", "vy", "za", "od", "do", "při", "pře", "s"),
        ),
        (
            "mluv",
            ("mluvit", "mlouvat", "mluvení", "mlouvání", "mluvený", "mluva", "mlouva"),
            "",
            ("", "do", "o", "za", "vy", "pře", "při", "pro", "po", "na", "od", "s", "u"),
        ),
    ),
}
# The prefixes whose noun of the iterative stem names the verb's action (převod, dovoz): the
# others make nouns of other things (závod, obvod, svod; přívoz, závoz), which stay apart.
_NOUN_PREFIXES: dict[str, frozenset[str]] = {
    "vod": frozenset(("pře", "při", "roz", "pod", "od", "vy", "na", "u")),
    "voz": frozenset(("pře", "roz", "od", "vy", "na", "do", "s")),
}


def _alternating_root(lemma: str, lang: str) -> str | None:
    """The root of a prefixed verb whose stem alternates (:data:`_ALTERNATING`), of its
    imperfective, verbal noun, participle and adjective (přijímací), and of its noun of the
    iterative stem; None for any other word."""
    for stem, endings, noun, prefixes in _ALTERNATING.get(lang, ()):
        for ending in endings:
            if lemma.endswith(ending) and lemma[: -len(ending)] in prefixes:
                return lemma[: -len(ending)] + stem
        if noun:
            plain = _plain_vowels(lemma, lang)  # přívod, výnos: the noun lengthens its prefix
            if plain.endswith(noun) and plain[: -len(noun)] in _NOUN_PREFIXES[noun]:
                return plain[: -len(noun)] + stem
    return None


# The endings after which a verb's "t" is spelled "c" and its "d" "z" (vrátit: vracet, vracení,
# vracejí, vrácený; vyřídit: vyřízení, vyřízený).
_IOTATED = frozenset({"et", "ět", "ení", "ění", "eje", "ejí", "ený", "ěný"})


def _iotated(root: str) -> str:
    """A verb's root as its imperfective, verbal noun or participle spells it (vracet,
    hodnocení, vrácený; vyřízení, poškozený; dosažení, navržený, zamčený), with the verb's
    consonant back: the "c" of a "t" always (a verb's "č" is its own: ukončit / ukončení); the
    "z" of a "d" where the dictionary knows the verb in -dit (zobrazení is of zobrazit,
    vyřízení of vyřídit); and the "ž" of an "h", the "č" of a "k" where it knows the verb in
    -hnout or -knout, its root's vowel long or short (dosáhnout / dosažení, zamknout /
    zamčený; snížení is of snížit). A prefixed verb's root is read as its verb's, since the
    dictionary may know the -hnout verb without the prefix only (podržet as držet)."""
    if root.endswith("c"):
        return root[:-1] + "t"
    # a cluster iotates whole, "st" to "šť", "zd" to "žď", "sl" to "šl" (pustit / puštění,
    # zjistit / zjištění, jezdit / ježdění, myslet / myšlení), where the dictionary knows the
    # verb with the plain cluster
    cluster = _IOTATED_CLUSTERS.get(root[-2:].replace("ť", "t").replace("ď", "d"))
    if cluster is not None and any(
        _known(root[:-2] + cluster + ending, "cs") for ending in ("it", "et", "ět")
    ):
        return root[:-2] + cluster
    # the imperfective may lengthen the vowel the verb in -dit has short (uklízet / uklidit)
    if root.endswith("z") and any(
        _known(stem + "dit", "cs") for stem in dict.fromkeys((root[:-1], _shortened(root[:-1])))
    ):
        return root[:-1] + "d"
    velar = {"ž": "h", "č": "k"}.get(root[-1:])
    if velar is not None:
        for stem in dict.fromkeys((root[:-1], _lengthened(root[:-1]))):
            unprefixed = [stem[len(p) :] for p in _PREFIXES["cs"] if stem.startswith(p)]
            if any(_known(s + velar + "nout", "cs") for s in (stem, *unprefixed) if s):
                return stem + velar
    return root


def _velar_ch(root: str, ending: str) -> str:
    """An adjective's (and so its adverb's) root with the "ch" of its noun back, which Czech
    spells "š" before -ný (úspěch / úspěšný / úspěšně, strach / strašný, hřích / hříšný), where
    the dictionary knows the noun; any other root as it is."""
    if (
        ending in ("ný", "ní", "nost", "nostní")
        and root.endswith("š")
        and _known(root[:-1] + "ch", "cs")
    ):
        return root[:-1] + "ch"
    return root


# The consonant clusters an iotated root spells apart, and the plain clusters of their verbs.
_IOTATED_CLUSTERS = {"št": "st", "žd": "zd", "šl": "sl"}

# How an iotated root's last consonant is spelled, unaccented, in the words _iotated reads.
_IOTATED_SPELLING = {"t": "c", "d": "z", "h": "z", "k": "c"}

_LONG = str.maketrans({"a": "á", "e": "é", "i": "í", "u": "ú", "y": "ý"})


def _shortened(stem: str) -> str:
    """The stem with its vowels short (uklíz: ukliz), as the perfective may spell it."""
    return stem.translate(_QUANTITY)


def _lengthened(stem: str) -> str:
    """The stem with its last vowel long (dosah: dosáh), as the verb may spell it."""
    for i in range(len(stem) - 1, -1, -1):
        if stem[i] in "aeiuy":
            return stem[:i] + stem[i].translate(_LONG) + stem[i + 1 :]
    return stem


def _known(word: str, lang: str) -> bool:
    words = dictionary_words(lang)
    return words is not None and word in words


def _own_word(word: str, lang: str) -> bool:
    """Whether the dictionary knows the word as a word of its own, not as another's form."""
    return _known(word, lang) and lemma_candidates(word, lang, False)[0] == word


def _asked_word(surface: str, lang: str) -> str:
    """The word a question's word asks for families by: itself, or where it is a short form of
    a longer lemma, the lemma ("velí" of velet, "řeší" of řešit; a passage's word of the family
    is as long as the lemma is)."""
    if len(surface) >= _MIN_WORD or not surface.isalpha():
        return surface
    lemma = (lemma_candidates(surface, lang, False) or [surface])[0]
    return lemma if len(lemma) >= _MIN_WORD and lemma.isalpha() else surface


def families(surface: str, lang: str) -> tuple[str, ...]:
    """The family keys a question's word asks for (``f:<root>``): none for a short word or a
    language without a table. A prefixed verb asks for its root with the prefix and for the
    unprefixed root (zažádám: žádost); an unprefixed word for its root, also where a passage's
    prefixed word holds it (žádost: zažádat); an agent noun for the agents of its verb
    (prodavač: prodejce, :func:`held_families`)."""
    agent = _agent_root(surface, lang)
    # an agent noun asks for another agent noun of its verb (prodavač: the passage's "prodejce")
    doer = (FAMILY_KEY + _AGENT + agent,) if agent is not None else ()
    root, bare = _roots(surface, lang)
    if not root:
        return doer
    adjective = _univerbal_adjective(surface, lang)
    spoken = families(adjective, lang) if adjective is not None else ()
    if bare is not None:
        return (FAMILY_KEY + root, FAMILY_KEY + bare, *spoken, *doer)
    return (FAMILY_KEY + root, FAMILY_KEY + _STRIPPED + root, *spoken, *doer)


# Spoken Czech makes one noun of an adjective and its noun (univerbation): "řidičák" of
# "řidičský průkaz", "služebka" of "služební cesta", "techničák" of "technický průkaz", "zimák"
# of "zimní stadion", "penzijko" of "penzijní spoření": the adjective's stem and -ák, -ka or
# -ko, declined as any such noun (the endings below, longest first). A dictionary of the
# written language lacks these words.
_UNIVERBAL_ENDINGS = (
    "ákách",
    "ákům",
    "ákem",
    "áků",
    "áky",
    "áku",
    "áka",
    "ák",
    "kami",
    "kách",
    "kám",
    "kem",
    "kou",
    "ek",
    "ky",
    "ku",
    "ko",
    "ce",
    "ka",
)
# The adjective endings a univerbation's stem is tried with (řidič-ský, služeb-ní, zim-ní).
_UNIVERBAL_ADJECTIVES = ("ský", "ní", "ný", "ový")


@lru_cache(maxsize=65536)
def _univerbal_adjective(surface: str, lang: str) -> str | None:
    """The adjective a spoken univerbation is made of ("řidičáku": řidičský, "služebku":
    služební, "techničák": technický), or None: for a word the dictionary knows (its own
    meaning stands), a capitalized one (a name: Sobotka, Švédka), another language or no
    adjective of its stem."""
    if not surface.isalpha() or not surface.islower() or _known(surface, lang):
        return None
    split = _suffixed(surface, lang, _UNIVERBAL_ENDINGS)
    # a word the lemmatizer reads as another's form is that word, no univerbation
    if split is None or "".join(split) != surface or len(split[0]) < _MIN_ROOT:
        return None
    stem = split[0]
    candidates = [stem + e for e in _UNIVERBAL_ADJECTIVES]
    if stem.endswith("č"):
        candidates.append(stem[:-1] + "cký")  # techničák: technický
    return next((c for c in candidates if _known(c, lang)), None)


def held_families(surface: str, lang: str) -> tuple[str, ...]:
    """The family keys a passage's word holds: its root and, for a prefixed verb, its root
    without the prefix marked as stripped, which only an unprefixed question word asks for; a
    place noun in -iště its action's root marked as a place (:func:`place_families`), and the
    root itself: the car park's price is what parking costs ("Jak zaplatím parkovné?" over
    "Parkoviště ... stojí 20 Kč")."""
    place = _place_root(surface, lang)
    if place is not None:
        return (FAMILY_KEY + _PLACE + place, FAMILY_KEY + place)
    agent = _agent_root(surface, lang)
    own = (FAMILY_KEY + _AGENT + agent,) if agent is not None else ()
    root, bare = _roots(surface, lang)
    if not root:
        return own
    if bare is not None:
        return (FAMILY_KEY + root, FAMILY_KEY + _STRIPPED + bare, *own)
    return (FAMILY_KEY + root, *own)


def family_root(key: str) -> str:
    """The root a family key names, as written in the words that hold it."""
    return key[len(FAMILY_KEY) :].removeprefix(_STRIPPED).removeprefix(_PLACE).removeprefix(_AGENT)


def place_families(surface: str, lang: str) -> tuple[str, ...]:
    """The keys of the place where a question word's action happens (zaparkovat: parkoviště,
    shromáždit se: shromaždiště), which a question for a place asks for ("Kde se dá
    zaparkovat?"): the root with the place mark, and its root without an aspectual prefix."""
    root, bare = _roots(_asked_word(surface, lang), lang)
    if not root or lang != "cs":
        return ()
    return tuple(FAMILY_KEY + _PLACE + r for r in dict.fromkeys((root, bare or root)))


def agent_families(surface: str, lang: str) -> tuple[str, ...]:
    """The keys of the one who does what a question word names (mluvit: mluvčí, provozovat:
    provozovatel, hlídat: hlídač, prodej: prodejce), which a question for a person asks for
    ("Kdo mluví za železárny?" over "... řekl mluvčí železáren Jan Novák"): the root with the
    agent mark, and its root without an aspectual prefix."""
    root, bare = _roots(_asked_word(surface, lang), lang)
    if not root or lang != "cs":
        return ()
    return tuple(FAMILY_KEY + _AGENT + r for r in dict.fromkeys((root, bare or root)))


def asked_families(surface: str, kind: str | None, lang: str) -> tuple[str, ...]:
    """The family keys a question word asks for by what its question asks: in a question for a
    place, where its action happens ("Kde se dá zaparkovat?" over "Parkoviště je pod hradem");
    in one for a person, who does it ("Kdo mluví za železárny?" over "... řekl mluvčí
    železáren"); nothing in any other."""
    if kind == "place":
        return place_families(surface, lang)
    return agent_families(surface, lang) if kind == "person" else ()


# The suffixes of Czech agent nouns (nomina agentis), longest first: -tel (provozovatel,
# pořadatel, dodavatel), -č (hlídač, prodavač, řidič) and its feminine -čka (uklízečka), -čí
# (mluvčí), -ník (pracovník), -ář (opravář), -átor and -or (organizátor, kontrolor), -ér
# (trenér), -ce (správce, zástupce, prodejce) and its feminine -kyně, and the nouns of present
# participles (kupující). Each replaces a verb's infinitive ending, or (-ce, -kyně) follows a
# noun of the action (prodej, správa).
_AGENT_SUFFIXES = (
    "ovatelka",
    "ovatel",
    "atelka",
    "itelka",
    "ující",
    "ající",
    "ovník",
    "atel",
    "itel",
    "átor",
    "ačka",
    "ička",
    "ečka",
    "kyně",
    "ící",
    "ník",
    "čí",
    "ač",
    "ič",
    "eč",
    "ář",
    "ař",
    "ér",
    "or",
    "ce",
)
# the infinitive endings an agent noun's stem takes back (mluv-čí: mluv-it, hlíd-ač: hlíd-at)
_AGENT_VERBS = ("ovat", "at", "it", "et", "ět")


@lru_cache(maxsize=65536)
def _agent_root(surface: str, lang: str) -> str | None:
    """The root of a Czech agent noun, its verb's (mluvčí: mluv of mluvit, dodavatel: dodav of
    dodávat) or, for -ce and -kyně, its action noun's (prodejce: prod of prodej); None for any
    other word, or one whose verb or noun the dictionary does not know. An agent names the one
    who acts, another thing than the action (mluvení), so it holds its root apart, for questions
    for a person only."""
    split = _suffixed(surface, lang, _AGENT_SUFFIXES) if surface.isalpha() else None
    if split is None or len(split[0]) < _MIN_ROOT:
        return None
    stem, suffix = split
    # the verb's stem may have its vowel long or short where the noun has the other (prodavač:
    # prodávat, správce: spravovat)
    stems = dict.fromkeys((stem, _lengthened(stem), _shortened(stem)))
    for verb in (s + e for s in stems for e in _AGENT_VERBS):
        if _known(verb, lang):
            root, _ = _roots(verb, lang)
            return root or None
    if suffix in ("ce", "kyně"):
        for noun in (n for s in stems for n in (s, s + "a")):
            # a word of its own, not another's form (velí of velet is no noun of "velice")
            if _own_word(noun, lang):
                root, _ = _roots(noun, lang)
                return root or None
    return None


def _suffixed(surface: str, lang: str, endings: tuple[str, ...]) -> tuple[str, str] | None:
    """A Czech word's lemma (the word itself where the dictionary lacks it) split before the
    first of ``endings`` it ends in, as (stem, ending); None for another language, a short word
    or none of the endings."""
    if lang != "cs" or len(surface) < _MIN_WORD:
        return None
    lemma = (lemma_candidates(surface, lang, False) or [surface])[0].lower()
    ending = next((e for e in endings if lemma.endswith(e)), None)
    if ending is None:
        return None
    return lemma[: -len(ending)], ending


# The forms of a place noun in -iště, longest first (parkoviště, -išti, -ištěm, -ištích, -išť).
_PLACE_ENDINGS = ("ištěmi", "ištích", "ištím", "ištěm", "iště", "išti", "išť")


@lru_cache(maxsize=65536)
def _place_root(surface: str, lang: str) -> str | None:
    """The root of a Czech place noun in -iště (parkoviště: park, shromaždiště: shromažd,
    koupaliště: koup), or None. Such a noun names the place of an action: it holds its root
    marked as a place, which a question for a place asks for, beside the action's own."""
    # the lemma, or the word itself in a case the dictionary lacks ("u shromaždišti")
    split = _suffixed(surface, lang, _PLACE_ENDINGS)
    if split is None:
        return None
    stem = split[0]
    for link in ("ov", "al"):  # parkov-iště, koupal-iště: the verb's stem, then the noun's
        if stem.endswith(link) and len(stem) - len(link) >= _MIN_ROOT:
            stem = stem[: -len(link)]
            break
    if len(stem) < _MIN_ROOT:
        return None
    return _plain_vowels(_plain_end(stem), lang)


# The verb endings of an infinitive (vést, pracovat, péci): a participle's verb has one.
_INFINITIVE_ENDS = ("t", "ci")


def is_infinitive(lemma: str) -> bool:
    """Whether an unaccented lemma ends as a Czech infinitive does (a participle's verb may be
    it)."""
    return lemma.endswith(_INFINITIVE_ENDS)


@lru_cache(maxsize=65536)
def participle_verb(surface: str, lang: str) -> str | None:
    """The verb of a Czech present participle used as a noun or adjective, as the lemma key of
    its forms ("vedoucí": ``l:vest``, so that "Zákaznickou podporu vede ..." names the head of
    support; "cestující": ``l:cestovat``), or None. The participle is the verb's third person
    plural and -cí (vedou-cí, pracují-cí), whose lemma is the verb."""
    if lang != "cs" or not surface.isalpha():
        return None
    lemma = (lemma_candidates(surface, lang, False) or [surface])[0].lower()
    if not lemma.endswith("cí") or len(lemma) < _MIN_WORD + 1:
        return None
    plural = analyze_word(lemma[: -len("cí")], lang)
    if plural is None or plural.stop or not plural.lemmas:
        return None  # budoucí: "budou" is a form of "být", which no passage keys
    verb = plural.lemmas[0]  # unaccented, as a lemma key is
    if verb == plural.form or not is_infinitive(verb):
        return None
    return "l:" + verb


# A Czech present participle's forms: the verb's third person plural (vedou, cestují, dělají)
# and -cí with the adjective's endings (vedoucího, cestujícím): found by that infix, then read
# out to the word's edges (a third faster than a pattern of the whole word).
_PARTICIPLE_INFIX = re.compile(r"(?:ou|í)cí")


# The phrases that name who heads something, each after its preposition, and their verbs: the
# verbal nouns of the verbs of heading in the instrumental after "pod" ("pod vedením Hany
# Marešové" names the one who leads, as the passive's agent would: "vedená Hanou Marešovou"),
# and "v čele" ("tři lidé v čele s Markétou Královou"). The verbal noun alone is as often the
# body that leads ("poděkovalo vedení", "porada vedení") and names no one.
_HEADING_PHRASES = (
    ("pod", "vedením", "vést"),
    ("pod", "velením", "velet"),
    ("pod", "řízením", "řídit"),
    ("pod", "předsednictvím", "předsedat"),
    ("v", "čele", "vést"),
)
# the same unaccented, as a text may be typed and as lemma keys are
_HEADED = {(p, unaccent(noun)): unaccent(verb) for p, noun, verb in _HEADING_PHRASES}
# the phrases in an unaccented text (a text holding one is unaccented whole, most hold none)
_HEADED_PHRASE = re.compile(r"\b(pod|v)\s+(" + "|".join(noun for _, noun in _HEADED) + r")\b")
# the verbs of the phrases, as lemma keys: only a question asking for one reads a text for them
HEADED_VERBS = frozenset("l:" + verb for verb in _HEADED.values())
# the nouns' first five letters, accented and not: a text holding none of them has no phrase (a
# substring test is a tenth of the pattern's scan)
_HEADED_STARTS = tuple({w for _, n, _ in _HEADING_PHRASES for w in (n[:5], unaccent(n[:5]))})


def agentive_verbs(text: str, lang: str) -> frozenset[str]:
    """The lemma keys of the verbs of heading a Czech text names by a phrase of heading ("pod
    vedením", "pod velením", "pod řízením", "pod předsednictvím", "v čele"): ``l:vest`` of
    "Účtárna pracuje pod vedením ...", which says who leads it."""
    if lang != "cs":
        return frozenset()
    low = text.lower()
    if not any(start in low for start in _HEADED_STARTS):
        return frozenset()
    found = (_HEADED.get((m[1], m[2])) for m in _HEADED_PHRASE.finditer(unaccent(low)))
    return frozenset("l:" + verb for verb in found if verb is not None)


def verbs_named(text: str, lang: str, wanted: frozenset[str] | None = None) -> frozenset[str]:
    """The verbs a text's present participles name (:func:`participle_verb` of each) and those
    its phrases "pod vedením" name (:func:`agentive_verbs`; only where ``wanted``, the verbs
    looked for, holds one of theirs): the lemma keys a passage's sentences hold beyond the words
    full text indexes."""
    if lang != "cs":
        return frozenset()
    low = text.lower()
    out = set(agentive_verbs(text, lang) if wanted is None or wanted & HEADED_VERBS else ())
    for m in _PARTICIPLE_INFIX.finditer(low):
        start, end = m.start(), m.end()
        while start and low[start - 1].isalnum():
            start -= 1
        while end < len(low) and low[end].isalnum():
            end += 1
        if (k := participle_verb(low[start:end], lang)) is not None:
            out.add(k)
    return frozenset(out)


def finite_verb(surface: str, lang: str) -> bool:
    """Whether a word the dictionary does not know has a finite verb's ending ("zažádám",
    "rezervujete"): the question's predicate, not a noun it is about."""
    word = surface.lower()
    if len(word) < _MIN_WORD or not word.isalpha():
        return False
    lemma = (lemma_candidates(surface, lang, False) or [word])[0].lower()
    if lemma != word and lemma != conjugated_lemma(word, lang):
        return False
    return any(word.endswith(e) and len(word) - len(e) >= _MIN_ROOT for e in _FINITE.get(lang, ()))


# The endings of an adjective made from a verb's l-participle (prasknout: praskl, prasklý,
# prasklé potrubí), in every case: the lemmatizer knows few of these adjectives.
_L_ADJECTIVE = ("lými", "lého", "lému", "lých", "lým", "lém", "lou", "lý", "lá", "lé", "lí")


def _participle_stem(word: str, lang: str) -> str | None:
    """The root of a -nout verb in its l-participle's adjective (prasklý, prasklé: prask, of
    prasknout; zamrzlá: zamrz), when the verb is a word of the dictionary: "světlý" and
    "teplý" end alike and come from no verb."""
    if lang != "cs":
        return None
    for ending in _L_ADJECTIVE:
        if word.endswith(ending):
            stem = word[: -len(ending)]
            if len(stem) >= _MIN_ROOT and _known(stem + "nout", lang):
                return stem
            return None
    return None


def _denominal(root: str, lang: str) -> bool:
    """Whether the root of a "-ka" noun is a noun's in "-a" or "-o" (škol-a, so školka is the
    school's diminutive or place, not an action): "-ka" makes action nouns of verbs (zkouška,
    přihláška), whose roots end no noun of their own."""
    words = dictionary_words(lang)
    return words is not None and (root + "a" in words or root + "o" in words)


def _plain_vowels(root: str, lang: str) -> str:
    """The root with the vowel alternations of Czech derivation undone: a vowel's length
    (ztratit / ztráta, hlásit / hlas, prosit / prosba) and the -ír- of the imperfectives of
    -řít verbs (otevřít / otevírat, zavřít / zavírat, vybrat / vybírat), each spelled short."""
    if lang != "cs":
        return root
    root = root.translate(_QUANTITY)
    if len(root) > 3 and root.endswith("ir") and root[-3] not in _VOWELS:
        root = root[:-2] + "r"
    return root


def _fixed_e(root: str, lang: str) -> str:
    """A noun's or an adjective's root without the mobile "e" of its last syllable, which the
    word's other forms and derivations drop (týden / týdne / týdně, pronájem / pronájmu /
    pronajmout, sestra / sester): every form spelled as the ones without it. A verb's root keeps
    its "e" (hledat), since a verb has no mobile vowel there."""
    if (
        lang == "cs"
        and len(root) >= 4
        and root[-2] == "e"
        and root[-1] not in _VOWELS
        and root[-3] not in _VOWELS
    ):
        return root[:-2] + root[-1]
    return root


def written(key: str) -> tuple[str, ...]:
    """How a family key's root is spelled, unaccented, in the words that hold it: as it is, with
    its last consonant as iotated (vrat: vracet, vyrid: vyrizeni), with the -ír- of an imperfective (otevr: otevřít,
    otevírat), with a mobile "e" (tydn: týden) and as a verb of motion's own stem (odjezd:
    odjet)."""
    root = unaccent(family_root(key))
    spellings = [root]
    # a verb of motion spells its own stem: odjet, odjede; přijít, přijde, přišel; odejít, odešel
    prefix = root[:-4]
    if root.endswith("jezd"):
        spellings.append(prefix + "je")
    elif root.endswith("chod"):
        spellings += [prefix + "j", prefix + "s"]
        if prefix:
            spellings += [prefix + "ej", prefix + "es"]
    for stem, others in _ALTERNATING_SPELLINGS:
        if root.endswith(stem) and len(root) > len(stem):
            spellings += [root[: -len(stem)] + other for other in others]  # přived: přivádět
    if len(root) > 3 and root.endswith("ch"):
        spellings.append(root[:-2] + "s")  # as _velar_ch undid it: uspech: uspesny
    if len(root) > 2 and root[-1] in _IOTATED_SPELLING:
        # as _iotated undid it: vrat: vracet, vyrid: vyrizeni, dosah: dosazeni, zamk: zamceny
        spellings.append(root[:-1] + _IOTATED_SPELLING[root[-1]])
    if len(root) > 2 and root[-1] not in _VOWELS and root[-2] not in _VOWELS:
        if root.endswith("r"):
            spellings.append(root[:-1] + "ir")
        spellings.append(root[:-1] + "e" + root[-1])
    return tuple(spellings)


# How the alternating stems (:data:`_ALTERNATING`) are spelled in their words, unaccented:
# přived in přivést, přivádět, přívod; přijm in přijímat, přijetí, přijatý.
_ALTERNATING_SPELLINGS = (
    ("ved", ("vest", "vad", "vod")),
    ("nes", ("nest", "nas")),
    ("vez", ("vezt", "vaz", "voz")),
    ("jm", ("jim", "jet", "jat")),
    ("mk", ("myk",)),
    ("kup", ("koup",)),
    ("mluv", ("mlouv",)),
)


def _plain_end(root: str) -> str:
    """The root with its final consonant's alternation undone (přihláš-: přihlás-)."""
    return root[:-1] + root[-1].translate(_ALTERNATION)


# Suffixes that follow a consonant of a verb's root only (stav-ba, služ-ba, pros-ba, plat-ba):
# after a vowel the "b" is the root's own (osob-a / osob-ní, chyb-a, podob-a, ryb-a).
_AFTER_A_CONSONANT = frozenset({"ba"})


def _strip(lemma: str, suffixes: tuple[tuple[str, bool], ...]) -> tuple[str, bool]:
    """The lemma without its longest derivational suffix that leaves a root, and whether that
    suffix was a verb's."""
    best: tuple[str, bool] | None = None
    for suffix, verbal in suffixes:
        if suffix in _AFTER_A_CONSONANT and lemma[-len(suffix) - 1 : -len(suffix)] in _VOWELS:
            continue
        if lemma.endswith(suffix) and len(lemma) - len(suffix) >= _LONG_ROOT.get(suffix, _MIN_ROOT):
            if best is None or len(suffix) > len(lemma) - len(best[0]):
                best = (lemma[: -len(suffix)], verbal)
    return best if best is not None else (lemma, False)
