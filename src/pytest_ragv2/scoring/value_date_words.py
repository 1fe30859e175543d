"""Month and day names in words, as dates write them in French, German and English (babel's
month names; the days of a month as ordinals and cardinals).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pytest_ragv2.scoring.normalisation import normalise

_ORDINALS: dict[str, int] = {
    **dict.fromkeys(("1er", "1re", "1ère", "1ere", "premier", "première", "premiere"), 1),
    **dict.fromkeys(("1.", "erste", "ersten", "erstes", "erster", "erstem", "1st", "first"), 1),
    **dict.fromkeys(("2e", "2ème", "2eme", "2nd", "2nde", "2d", "deuxième", "deuxieme"), 2),
    **dict.fromkeys(("second", "seconde", "2.", "zweite", "zweiten", "zweites", "zweiter"), 2),
    **dict.fromkeys(("3e", "3ème", "3eme", "3rd", "troisième", "troisieme", "third", "3."), 3),
    **dict.fromkeys(("dritte", "dritten", "drittes", "dritter"), 3),
    **dict.fromkeys(("4e", "4ème", "4eme", "4th", "quatrième", "quatrieme", "fourth", "4."), 4),
    **dict.fromkeys(("vierte", "vierten", "viertes", "vierter"), 4),
    # the last of the periods: the fourth quarter, the second half (0: read by the period)
    **dict.fromkeys(("last", "final", "dernier", "derniere", "dernière", "letzte"), 0),
    **dict.fromkeys(("letzten", "letztes", "letzter"), 0),
}


def _fold_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


@lru_cache(maxsize=1)
def month_names() -> dict[str, int]:
    """Every normalised spelling of a month name in fr, de and en (babel's wide and
    abbreviated names, format and stand-alone), also without accents and final dot."""
    from babel.dates import get_month_names

    names: dict[str, int] = {}
    for locale in ("fr", "de", "en"):
        for width in ("wide", "abbreviated"):
            for context in ("format", "stand-alone"):
                for number, name in get_month_names(width, context, locale).items():
                    spelling = normalise(str(name)).text.rstrip(".")
                    for form in (spelling, _fold_accents(spelling)):
                        if len(form) >= 3:
                            names.setdefault(form, int(number))
    return names


@lru_cache(maxsize=1)
def _day_words() -> dict[str, int]:
    """The days of a month in words, as dates write them: English and German ordinals
    ("the sixth of October", "am sechsten Oktober"), French cardinals ("le six octobre")."""
    en = [
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "eleventh",
        "twelfth",
        "thirteenth",
        "fourteenth",
        "fifteenth",
        "sixteenth",
        "seventeenth",
        "eighteenth",
        "nineteenth",
        "twentieth",
    ]
    days: dict[str, int] = {word: number for number, word in enumerate(en, 1)}
    for number, word in enumerate(en[:9], 1):
        days[f"twenty-{word}"] = days[f"twenty {word}"] = 20 + number
    days.update({"thirtieth": 30, "thirty-first": 31, "thirty first": 31})
    de_units = ("ein", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun")
    de = [
        "erst",
        "zweit",
        "dritt",
        "viert",
        "fünft",
        "sechst",
        "siebt",
        "acht",
        "neunt",
        "zehnt",
        "elft",
        "zwölft",
        "dreizehnt",
        "vierzehnt",
        "fünfzehnt",
        "sechzehnt",
        "siebzehnt",
        "achtzehnt",
        "neunzehnt",
        "zwanzigst",
    ]
    stems: dict[str, int] = {stem: number for number, stem in enumerate(de, 1)}
    stems["siebent"] = 7
    for number, unit in enumerate(de_units, 1):
        stems[f"{unit}undzwanzigst"] = 20 + number
    stems.update({"dreissigst": 30, "einunddreissigst": 31})
    for stem, number in stems.items():
        for ending in ("e", "en", "er", "es", "em"):
            days[stem + ending] = number
            days[_fold_accents(stem) + ending] = number
    fr = [
        "premier",
        "deux",
        "trois",
        "quatre",
        "cinq",
        "six",
        "sept",
        "huit",
        "neuf",
        "dix",
        "onze",
        "douze",
        "treize",
        "quatorze",
        "quinze",
        "seize",
        "dix-sept",
        "dix-huit",
        "dix-neuf",
        "vingt",
    ]
    days.update({word: number for number, word in enumerate(fr, 1)})
    for number, word in enumerate(fr[1:9], 2):
        days[f"vingt-{word}"] = 20 + number
    days.update({"vingt et un": 21, "vingt-et-un": 21, "trente": 30, "trente et un": 31})
    return days


@lru_cache(maxsize=1)
def _day_word_before() -> re.Pattern[str]:
    words = "|".join(re.escape(word) for word in sorted(_day_words(), key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?P<day>{words}) (?:of (?:the )?)?$")
