"""Greetings, request frames and thanks at the edges of a chat question are not what it asks."""

from __future__ import annotations

import pytest

from rag.language.courtesy import core_question, without_courtesy


@pytest.mark.parametrize(
    ("question", "core"),
    [
        ("Dobrý den, kolik stojí parkování v Brně?", "Kolik stojí parkování v Brně?"),
        ("Kolik stojí parkování v Brně? Díky!", "Kolik stojí parkování v Brně?"),
        ("Kolik dní dovolené mám za rok? Děkuji předem.", "Kolik dní dovolené mám za rok?"),
        ("Chtěla bych se zeptat, kolik dní dovolené mám.", "Kolik dní dovolené mám."),
        # "prosím" anywhere inside a leading formula
        ("Mohl byste mi prosím říct, kde je shromaždiště?", "Kde je shromaždiště?"),
        ("Prosím vás, potřebuji vědět: kdo je Novák?", "Kdo je Novák?"),
        ("Díky předem: jak dlouho trvá zkušební doba?", "Jak dlouho trvá zkušební doba?"),
        # typed without diacritics: the same formulas
        ("Dobry den, kolik stoji parkovani? Dekuji", "Kolik stoji parkovani?"),
        ("Dobrý deň, koľko stojí parkovanie? Ďakujem", "Koľko stojí parkovanie?"),
        (
            "Hi, could you please tell me where the assembly point is? Thanks",
            "Where the assembly point is?",
        ),
        ("Guten Tag, können Sie mir sagen, wann das Lager öffnet? Danke", "Wann das Lager öffnet?"),
        ("Здравствуйте! Скажите, пожалуйста, где склад? Спасибо", "Где склад?"),
        ("Dzień dobry, gdzie jest magazyn? Dziękuję", "Gdzie jest magazyn?"),
        # nothing to cut: the question as it is
        ("Kdo je Novák?", "Kdo je Novák?"),
        ("Kdo vyřizuje poděkování partnerům?", "Kdo vyřizuje poděkování partnerům?"),
        ("Kdy se koná den otevřených dveří?", "Kdy se koná den otevřených dveří?"),
        ("Jak se říká dobrý den německy?", "Jak se říká dobrý den německy?"),
        # "díky" + dative is the preposition "thanks to", not thanks
        ("Díky odklonu dopravy vznikl zisk.", "Díky odklonu dopravy vznikl zisk."),
        ("Dobrý den, díky čemu vznikl zisk?", "Díky čemu vznikl zisk?"),
        (
            "Thanks to the detour, did the profit grow?",
            "Thanks to the detour, did the profit grow?",
        ),
        # nothing but formulas: searched as written
        ("Děkuji!", "Děkuji!"),
        ("Dobrý den, děkuji.", "Dobrý den, děkuji."),
        ("", ""),
    ],
)
def test_without_courtesy(question: str, core: str) -> None:
    assert without_courtesy(question) == core


def test_the_core_is_a_fixed_point() -> None:
    for q in ("Dobrý den, prosím, kolik stojí oběd? Díky moc!", "Ahoj! Víte, kde je sklad? Díky"):
        core = without_courtesy(q)
        assert core != q and without_courtesy(core) == core


@pytest.mark.parametrize(
    ("question", "core"),
    [
        ("Kdo je Novák? 🙂", "Kdo je Novák?"),
        ("Smí pes do kanceláře? 🐶👍", "Smí pes do kanceláře?"),
        ("Kde je sklad?✅ Díky!", "Kde je sklad?"),
        # shouting marks every word: ordinary case, the first letter kept capital
        ("KOLIK STOJÍ PARKOVÁNÍ V BRNĚ?", "Kolik stojí parkování v brně?"),
        # capitals inside an ordinary question are names and codes: kept
        ("Kolik stojí SOVA T3?", "Kolik stojí SOVA T3?"),
        ("Co je ZX-4411?", "Co je ZX-4411?"),
        ("Dobrý den, kdo je Novák? Děkuji. 🙂", "Kdo je Novák?"),
        ("👍", "👍"),
    ],
)
def test_core_question(question: str, core: str) -> None:
    assert core_question(question) == core
