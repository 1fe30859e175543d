"""Time to read the typed values of an answer (``scoring.values.read_values``), in µs per KB.

Chat answers in French, German and English of two shapes: ``typical`` (prose with a
handful of values: a price, a percentage, a duration, a date, an identifier) and ``dense``
(about 30 values per KB: amounts, percentages, durations, dates, a phone number,
identifiers, counts and numbers in words), each read ``--repeat`` times in one process
after one warm-up read (the libraries' first-use imports and the month-name pattern are
paid once per process and reported apart). The
normalisation cache is cleared before every read, so each read pays the whole work, as a
new answer does; a second figure keeps it, as when claim matching has already normalised
the answer. Also prints what the first use costs: importing the module, and the first
read (babel's month names, text2num, phonenumbers).

    python benchmarks/bench_values.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TYPICAL = {
    "fr": (
        "D'après la documentation, le plan Enterprise est le plus adapté à votre besoin : il "
        "comprend un support prioritaire joignable en semaine, une sauvegarde quotidienne des "
        "données et un accès complet à l'API. Son prix est de 1 100 € par mois, engagement "
        "annuel inclus, et il garantit un taux de disponibilité de 99,7 %. En cas d'incident, "
        "l'objectif de reprise est de 4 heures. La migration depuis l'offre actuelle se fait "
        "sans interruption de service, avec un accompagnement dédié pendant la phase de mise "
        "en place ; elle est prévue au premier trimestre 2026. Les conditions détaillées sont "
        "décrites dans le contrat CC-MER-2024-017, section 3, et dans la fiche tarifaire [1]. "
        "Si vous avez besoin d'une configuration particulière, l'équipe commerciale peut "
        "préparer une offre sur mesure après un premier échange.\n"
    ),
    "de": (
        "Laut Datenblatt eignet sich der Verdichter TVS 75 für Ihre Anwendung: Er arbeitet "
        "mit einem maximalen Betriebsdruck von 16 bar und liefert bei Nennbedingungen einen "
        "Volumenstrom, der für zwei parallele Abfüllstationen ausreicht. Die Aufstellung muss "
        "frostfrei erfolgen, die Umgebungstemperatur darf höchstens +45 °C betragen. Die "
        "Wartung ist alle 4.000 Betriebsstunden fällig, spätestens jedoch nach 12 Monaten; "
        "der Service ist über die bekannte Hotline erreichbar. Für den Anschluss an die "
        "bestehende Steuerung wird das Ersatzteil KV-4501-8 benötigt, das zum TVK 220 gehört. "
        "Eine Lieferung ist nach Auftragseingang innerhalb von etwa sechs Wochen möglich. "
        "Weitere Details finden Sie im Datenblatt [1] und in der Betriebsanleitung [2].\n"
    ),
    "en": (
        "Based on the documents, the Business plan fits your team best: it includes priority "
        "support during office hours, daily backups and full access to the reporting "
        "features. It costs €290 per month per site, and the provider commits to an "
        "availability of 99.5%, with incidents acknowledged within 4 hours. Moving from your "
        "current plan does not interrupt the service, and a dedicated contact helps during "
        "the first weeks. The rollout of the new release is planned for Q1 2026, and the "
        "company has held its ISO 27001 certification since 2019. The full terms are in the "
        "service agreement and the price list [1]; for a custom setup, the sales team can "
        "prepare an offer after a short call with your IT department.\n"
    ),
}
ANSWERS = {
    "fr": (
        "D'après le contrat CC-MER-2024-017, le plan Enterprise coûte 1 100 € par mois et "
        "garantit un SLA de 99,7 % avec un RTO de 4 heures et un RPO de 15 minutes. Le "
        "chiffre d'affaires 2024 atteint 5 763 k€, soit environ 5,76 millions d'euros, avec "
        "33 nouveaux clients et quarante-sept salariés. La migration vers la nouvelle "
        "plateforme est prévue au premier trimestre 2026 (T1 2026), après une phase pilote "
        "de quatre-vingt-dix jours qui commence le 6 octobre 2025. Le support est joignable "
        "au 02 85 52 41 90 ou à support@example.com, du lundi au vendredi de 8 h à 18 h. "
        "L'entreprise est certifiée ISO 27001 depuis novembre 2023 et a obtenu le rapport "
        "SOC 2 en juin 2025. Pour le compresseur TVS 75, la pression maximale est de 16 bar "
        "à 20 °C et le débit de 12,1 m³/min ; la maintenance est due toutes les 4 000 h de "
        "fonctionnement ou au plus tard après 1,5 an. Voir la fiche technique [1] et le "
        "document datenblatt-tvs-75.pdf pour le détail des 3 variantes.\n"
    ),
    "de": (
        "Laut Vertrag TW-P-24-003 liegt der maximale Betriebsdruck des TVK 220 bei 16 bar; "
        "die ISO-27001-Zertifizierung besteht seit 2019, der SOC-2-Bericht wurde im Juni "
        "2025 erneuert. Der Umsatz lag 2024 bei 5.763 Mio. € bzw. 5 763 000 €, ein Plus von "
        "12 Prozent gegenüber dem Vorjahr, mit dreiunddreißig neuen Kunden. Die Umstellung "
        "ist für das 1. Quartal 2026 geplant, der Rollout im 2. Halbjahr 2026. Wartung: alle "
        "4.000 Betriebsstunden oder spätestens nach 12 Monaten, Reaktionszeit 24-Stunden-"
        "Service, Lieferung in 5 Werktagen. Ansprechpartner erreichen Sie unter +49 711 "
        "12345-0 oder per E-Mail an service@example.de; Stand 04/2025, gültig ab 6.10.2025. "
        "Das Ersatzteil KV-4501-8 gehört zum TVK 220, nicht zum TVS 75 (Art.-Nr. 4711-0815). "
        "Die Schalldruckpegel liegen zwischen 68 und 74 dB(A), die Umgebungstemperatur "
        "muss mindestens +5 °C und höchstens +45 °C betragen. Insgesamt gibt es 3 Varianten.\n"
    ),
    "en": (
        "Under contract DB-TVS75-DE-09 the Enterprise plan costs €1,100 per month and the "
        "availability target is 99.7%, with a recovery time objective of 4 hours. Revenue "
        "for 2024 reached €5.763M (EUR 5,763k), up thirty-eight percent, with 33 new "
        "customers. The migration is planned for the first quarter of 2026 (Q1 2026) and the "
        "second phase for H2 2026, after a pilot of ninety days starting on October 6, 2025. "
        "Support is available at +44 20 7946 0958 or support@example.com and at "
        "https://www.example.com/support/. The company has been ISO 27001 certified since "
        "2019 and SOC 2 compliant since June 2025. The TVS 75 compressor runs at up to 16 bar "
        "and 12.1 m³/min; service is due every 4,000 operating hours or after 1.5 years. "
        "Lead times are 5 business days, and the warranty is 24 months. See [1] and [2] for "
        "the 3 variants and the part numbers SK-22OA and NX-450B.\n"
    ),
}


def _first_use() -> tuple[float, float]:
    """(seconds to import the module, seconds of the first read) in a fresh interpreter."""
    code = (
        "import pytest_ragv2.scoring.numbers, pytest_ragv2.scoring.identifiers;"
        "import pytest_ragv2.scoring.answer_text;"
        "import time; t = time.perf_counter();"
        "from pytest_ragv2.scoring.values import read_values;"
        "a = time.perf_counter();"
        f"read_values({ANSWERS['fr']!r}, 'fr');"
        "b = time.perf_counter(); print(a - t, b - a)"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    first, second = output.split()
    return float(first), float(second)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()

    from pytest_ragv2.scoring.normalisation import normalise
    from pytest_ragv2.scoring.values import read_values

    imported, first_read = _first_use()
    print(
        f"import of scoring.values: {imported * 1000:.1f} ms (its own: the scoring modules it"
        " uses already imported; phonenumbers, babel, text2num not imported)"
    )
    print(f"first read in a process (libraries, month names): {first_read * 1000:.1f} ms")
    print(
        f"{'shape':<9}{'lang':<6}{'KB':>6}{'values':>8}{'µs/read':>10}{'µs/KB':>9}"
        f"{'µs/KB, normalised text cached':>31}"
    )
    for shape, answers in (("typical", TYPICAL), ("dense", ANSWERS)):
        totals: list[float] = []
        totals_cached: list[float] = []
        for lang, text in answers.items():
            found = read_values(text, lang)  # warm-up: imports and compiled patterns
            times = []
            # the reading itself, not its per-text cache (an answer is read once per turn)
            for _ in range(args.repeat):
                normalise.cache_clear()
                read_values.cache_clear()
                start = time.perf_counter()
                read_values(text, lang)
                times.append(time.perf_counter() - start)
            cached = []
            for _ in range(args.repeat):
                read_values.cache_clear()
                start = time.perf_counter()
                read_values(text, lang)
                cached.append(time.perf_counter() - start)
            median = statistics.median(times)
            kb = len(text.encode()) / 1024
            per_kb = median / kb * 1e6
            totals.append(per_kb)
            totals_cached.append(statistics.median(cached) / kb * 1e6)
            print(
                f"{shape:<9}{lang:<6}{kb:>6.2f}{len(found):>8}{median * 1e6:>10.0f}{per_kb:>9.0f}"
                f"{totals_cached[-1]:>31.0f}"
            )
        print(
            f"{shape}: {statistics.mean(totals):.0f} µs per KB, "
            f"{statistics.mean(totals_cached):.0f} with the normalised text cached "
            "(means of the three languages)"
        )


if __name__ == "__main__":
    main()
