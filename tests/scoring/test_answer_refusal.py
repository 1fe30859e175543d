"""Refusal recognition without an exact phrase: a development set per language.

The development set below is written for the detector's tests; the held-apart set
(``tests/data/refusal_heldout.yaml``, written by someone else) is only measured, once, by
``test_refusal_heldout_precision_and_recall`` and ``benchmarks/bench_refusal.py``.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pytest_ragv2.scoring.refusal as refusal_module
from pytest_ragv2.scoring.phrases import DEFAULT_REFUSAL_PHRASES
from pytest_ragv2.scoring.refusal import find_refusal, is_refusal
from pytest_ragv2.scoring.refusal_clauses import Refusal, clauses
from pytest_ragv2.scoring.refusal_eval import precision_recall, read_heldout
from pytest_ragv2.scoring.refusal_lexicon import LEXICONS

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "tests" / "data" / "refusal_heldout.yaml"
# decided before the held-apart set was measured
MIN_PRECISION = 0.9
MIN_RECALL = 0.85

NO_PHRASES: dict[str, tuple[str, ...]] = {"fr": (), "de": (), "en": ()}

DEV: dict[str, dict[str, list[str]]] = {
    "fr": {
        "refusals": [
            "Je n'ai trouvé aucune information sur nos clients au Japon.",
            "Les documents ne donnent pas le nombre de clients au Japon.",
            "Cette donnée n'apparaît nulle part dans les sources fournies.",
            "Rien dans la base documentaire ne permet de répondre à cette question.",
            "Je ne peux pas répondre : le chiffre demandé n'est pas dans le corpus.",
            "Les extraits consultés ne précisent pas le délai de livraison.",
            "Il n'y a pas de données sur le Japon dans les documents.",
            "Aucun des documents n'évoque une implantation au Japon.",
            "Je ne sais pas, les documents sont muets sur ce point.",
            "Désolé, je n'ai pas cette information.",
            "Le TVS 75 n'est pas prévu pour l'hydrogène ; il faut le TVM 30-H2.",
            "Ce compresseur n'est pas homologué pour l'oxygène.",
            "Je ne suis pas en mesure de confirmer ce montant.",
            "La fiche technique ne mentionne aucun niveau sonore pour cette variante.",
            "Aucune mention d'un tarif étudiant dans la documentation.",
            "Le nombre de clients japonais n'est indiqué dans aucun document.",
            "Je ne trouve pas trace de ce contrat dans les sources.",
            "Sans information dans les documents, je ne peux pas donner de chiffre.",
            "Le TVS 75 ne convient pas au gaz naturel.",
            "Les documents fournis ne contiennent pas cette valeur.",
        ],
        "non_refusals": [
            "Le plan Pro n'inclut pas de frais de mise en service ; il coûte 49 €/mois.",
            "Non, le contrat ne prévoit pas de pénalité au-delà de 30 %.",
            "Le préavis est de 90 jours avant l'échéance [1].",
            "Aucune donnée ne quitte l'Union européenne : l'hébergement est à Gravelines.",
            "Le plan Starter ne comprend pas l'API ; seul le plan Business la propose.",
            "Le RPO est de 15 minutes et le RTO de 4 heures.",
            "Non, le support n'est pas disponible le week-end pour le plan Starter.",
            "Il n'y a pas de frais de résiliation, seulement un préavis de 90 jours.",
            "Les données sont chiffrées en AES-256 et ne sont jamais transmises à des tiers.",
            "Le chiffre d'affaires du T4 est de 1 689 k€, sans compter NimbusPredict.",
            "La maintenance ne peut pas dépasser 6 heures par mois.",
            "Aucun avoir n'est dû au-delà du plafond de 30 %.",
            "Le TVK 110 n'existe qu'en 230 V.",
            "Le plan Enterprise n'a pas de prix public : il est établi sur devis à partir de "
            "1 100 € HT par mois.",
            "Nous avons signé 33 nouveaux clients au quatrième trimestre.",
            "Le PRA est testé deux fois par an, en mars et en octobre.",
            "Non, le downgrade n'est pas immédiat : il prend effet sous 30 jours.",
            "La purge n'intervient pas avant 120 jours.",
        ],
    },
    "de": {
        "refusals": [
            "In den Unterlagen habe ich dazu nichts gefunden.",
            "Die Dokumente nennen keinen Schalldruckpegel für diese Variante.",
            "Dazu liegen mir keine Angaben vor.",
            "Das Datenblatt macht keine Aussage zur Lieferzeit.",
            "Leider kann ich diese Frage anhand der Quellen nicht beantworten.",
            "Eine Preisangabe fehlt in den vorliegenden Dokumenten.",
            "Der TVS 75 ist für Wasserstoff, Sauerstoff oder Erdgas nicht zugelassen.",
            "Der Verdichter ist nicht für brennbare Gase ausgelegt.",
            "Weder das Datenblatt noch die Betriebsanleitung erwähnen diesen Wert.",
            "Das weiß ich nicht; die Unterlagen schweigen dazu.",
            "Ich habe keine Informationen über Kunden in Japan.",
            "Aus den Auszügen geht das nicht hervor.",
            "Diese Zahl kann ich nicht bestätigen.",
            "Dazu gibt es in der Wissensbasis keine Daten.",
            "Der TVK 110 ist für Sauerstoff nicht geeignet.",
            "Eine Zertifizierung nach ATEX ist in den Dokumenten nicht aufgeführt.",
            "Die Angabe ist in keinem Dokument enthalten.",
            "Ich kann keinen Hinweis auf eine 400-V-Variante finden.",
        ],
        "non_refusals": [
            "Nein, eine Inbetriebnahme ist im Preis nicht enthalten; sie kostet 450 €.",
            "Der Ölwechsel ist alle 4 000 Betriebsstunden fällig [1].",
            "Nein, der TVK 110 ist nicht in 400 V erhältlich, nur in 230 V.",
            "Es fallen keine Einrichtungsgebühren an.",
            "Die Kundendaten werden nicht außerhalb der EU gespeichert.",
            "Der TVS 75-10 liefert 12,1 m³/min bei 75 kW.",
            "Für Wasserstoff ist ausschließlich der Membranverdichter TVM 30-H2 vorgesehen.",
            "Eine Wartung ist im August nicht vorgesehen.",
            "Der Kolbenringsatz SK-22OA passt nur für die Hochdruckstufe des TVK 220.",
            "Nein, die Garantie verlängert sich nicht automatisch.",
            "Das Gerät hat kein Display, die Bedienung erfolgt über die App.",
            "Keine Zahlung ist vor der Lieferung fällig.",
            "Der Verdichter darf nicht über 16 bar betrieben werden.",
            "Die Liefermenge liegt bei 0,92 m³/min, nicht bei 1,2 m³/min.",
            "Ein Fehler E42 zeigt einen Hinweis auf zu niedrigen Öldruck an.",
            "Es gibt keine Einschränkung bei der Aufstellhöhe bis 1 000 m.",
        ],
    },
    "en": {
        "refusals": [
            "I could not find this information in the provided documents.",
            "The documents don't say how many customers we have in Japan.",
            "None of the sources mention a student discount.",
            "There is no information about the X3's battery in the knowledge base.",
            "I don't know; the datasheet is silent on this.",
            "I'm unable to confirm that figure from the material I was given.",
            "The TVS 75 is not rated for hydrogen.",
            "This compressor is not approved for oxygen service.",
            "Nothing in the excerpts covers the delivery time.",
            "The sound pressure level is not stated anywhere in the documentation.",
            "I can't answer that from the documents.",
            "No details on the warranty extension price are available.",
            "That value is missing from the datasheet.",
            "The provided context does not include the 2024 revenue.",
            "I don't have that information.",
            "The TVK 110 is not suitable for natural gas.",
            "Sorry, I cannot determine the notice period from these sources.",
            "The X2 is not designed for outdoor use in the rain, so I cannot recommend it.",
        ],
        "non_refusals": [
            "No, the TVK 110 is not available in 400 V; only 230 V.",
            "There is no setup fee; the Pro plan costs €49 per month.",
            "The notice period is 90 days before the renewal date [1].",
            "No customer data is stored outside the EU.",
            "The Starter plan does not include API access; only Business does.",
            "Support is not available on weekends for the Starter plan.",
            "The X2 runs 11.5 hours on one charge and does not need a docking station.",
            "The warranty is 24 months and does not cover wear parts.",
            "Maintenance may not exceed 6 hours per month.",
            "No, remote work is limited to two days per week.",
            "The kit does not contain an oil filter; order part KV-4501-8 separately.",
            "Never run the compressor above 16 bar.",
            "Q4 revenue was €1,689k with 33 new customers.",
            "The credit is 5% of the monthly fee per hour, capped at 30%.",
            "The device has no display; it is configured through the app.",
            "Data is not shared with third parties and is encrypted with AES-256.",
            # a synthetic-data label is no refusal (a demo V1 answer of the bundled benchmark)
            "According to the documents: note: SYNTHETIC DEMO DATA: these project records are "
            "generated for the benchmark and describe no real customer, site or installation. "
            "Synthetische Demodaten, keine bestätigten Projektdaten. | synthetic: true [1].",
        ],
    },
}


MORE: dict[str, dict[str, list[str]]] = {
    "fr": {
        "refusals": [
            "Je n'ai pas pu trouver cette information.",
            "Cette information n'est pas disponible dans ma base.",
            "Les documents à ma disposition ne couvrent pas ce sujet.",
            "Je ne dispose d'aucun élément permettant de répondre.",
            "Malheureusement, la documentation ne fournit pas ce chiffre.",
            "Il m'est impossible de répondre à partir des documents.",
            "Je n'ai accès à aucune donnée sur ce point.",
            "Ce point n'est pas abordé dans les documents.",
            "Les sources sont silencieuses sur ce sujet.",
            "Je ne connais pas le nombre de clients au Japon.",
            "Le corpus ne permet pas de le dire.",
            "Cette question dépasse le contenu des documents fournis.",
            "Je ne peux pas vous renseigner sur ce point.",
            "Aucun chiffre n'est communiqué pour le Japon.",
            "Cela n'apparaît pas dans les documents.",
            "Le document ne fait pas état d'un bureau au Japon.",
            "Rien n'indique un tel tarif dans la documentation.",
            "Je n'ai rien trouvé à ce sujet.",
            "L'information demandée est absente des documents.",
            "Ce modèle n'est pas compatible avec l'ammoniac.",
            "L'utilisation avec de l'hydrogène n'est pas autorisée pour ce compresseur.",
            "Le TVS 75 ne doit pas être utilisé avec de l'hydrogène.",
            "Je ne peux pas recommander ce modèle pour l'hydrogène.",
            "Je préfère ne pas avancer de chiffre sans source.",
            "Les documents ne permettent pas de répondre à cette question.",
            "Impossible de le déterminer à partir des documents.",
            "Ce n'est pas précisé.",
            "Je n'ai pas d'élément sur ce sujet.",
            "Nos documents ne traitent pas du marché japonais.",
            "Il n'existe aucune donnée à ce sujet dans les documents fournis.",
        ],
        "non_refusals": [
            "Le préavis n'est pas de 60 mais de 90 jours.",
            "Le plan Starter n'offre pas d'export, contrairement au plan Business.",
            "Non, les données ne sont pas hébergées hors de France.",
            "Le SLA n'est pas de 99,9 % mais de 99,7 %.",
            "Les logs sont conservés 18 mois et ne sont pas supprimés avant.",
            "Aucune maintenance n'est planifiée en août.",
            "Le document de référence est le contrat-cadre Meridia.",
            "Les informations de facturation sont envoyées chaque mois.",
        ],
    },
    "de": {
        "refusals": [
            "Dazu finde ich in den Dokumenten keine Information.",
            "Die Unterlagen enthalten dazu keine Angaben.",
            "Darüber ist in den Quellen nichts zu finden.",
            "Diese Information ist nicht verfügbar.",
            "Das kann ich aus den Unterlagen nicht entnehmen.",
            "Leider liegen hierzu keine Daten vor.",
            "Das geht aus den bereitgestellten Dokumenten nicht hervor.",
            "Darauf habe ich keine Antwort.",
            "Die Dokumente schweigen zu diesem Punkt.",
            "Es ist nicht dokumentiert, wie viele Kunden wir in Japan haben.",
            "Ich kann dazu keine Aussage machen.",
            "Hierzu wird in den Unterlagen nichts gesagt.",
            "Mir sind dazu keine Zahlen bekannt.",
            "Das ist mir nicht bekannt.",
            "Der TVS 75 darf nicht mit Wasserstoff betrieben werden.",
            "Für Sauerstoff ist dieser Verdichter nicht freigegeben.",
            "Den Einsatz mit Ammoniak kann ich nicht empfehlen.",
            "Eine Angabe zur Lieferzeit finde ich nicht.",
            "Ich habe dazu keine Informationen gefunden.",
            "Darüber kann ich leider keine Auskunft geben.",
            "Das lässt sich aus den Unterlagen nicht ermitteln.",
            "Dazu steht nichts in den Dokumenten.",
            "Der Wert wird nirgends genannt.",
            "Es gibt dazu keine Angaben in den Quellen.",
        ],
        "non_refusals": [
            "Der Druck darf 16 bar nicht überschreiten.",
            "Das Öl muss nicht vor 4 000 Stunden gewechselt werden.",
            "Nein, der TVS 75 braucht keinen separaten Trockner.",
            "Laut Datenblatt beträgt die Leistung 75 kW.",
            "Die Informationen im Datenblatt gelten für Revision D.",
        ],
    },
    "en": {
        "refusals": [
            "I couldn't find anything about that.",
            "That information isn't in the documents I have.",
            "The sources don't cover this topic.",
            "I have no data on customers in Japan.",
            "Unfortunately, the documentation does not provide that figure.",
            "I'm not able to answer that based on the documents.",
            "This isn't mentioned anywhere.",
            "There's nothing in the knowledge base about that.",
            "I don't have enough information to answer.",
            "The documents are silent on this point.",
            "I can't tell from the provided material.",
            "The answer is not in the documents.",
            "That's not something the documents cover.",
            "No such figure appears in the sources.",
            "I was unable to locate that value.",
            "The documentation doesn't specify a delivery time.",
            "It is not possible to determine this from the documents.",
            "Using the TVS 75 with hydrogen is not permitted.",
            "The TVS 75 must not be used with hydrogen.",
            "I would not recommend the X2 for that use.",
            "The compressor is not certified for ATEX zones.",
            "The knowledge base has no record of that contract.",
            "I have no way to verify that.",
            "The requested figure is not given in the documents.",
        ],
        "non_refusals": [
            "No, the notice period is not 60 days but 90 days.",
            "The SLA is not 99.9% but 99.7%.",
            "The X2 does not need a docking station.",
            "The document lists three plans.",
            "No information is lost during failover.",
            "According to the datasheet, the motor power is 75 kW.",
            "The Business plan has no user limit.",
        ],
    },
}
for _lang, _sets in MORE.items():
    for _kind, _texts in _sets.items():
        DEV[_lang][_kind].extend(_texts)


MORE_2: dict[str, dict[str, list[str]]] = {
    "fr": {
        "refusals": [
            "Je suis désolé, mais je ne dispose pas de cette information.",
            "Les documents fournis ne permettent pas de déterminer le nombre de clients au Japon.",
            "Cette information n'est pas présente dans les documents à ma disposition.",
            "Je n'ai pas accès à cette information.",
            "Aucun élément des documents ne répond à cette question.",
            "Il m'est impossible de vous donner ce chiffre.",
            "Je ne peux pas vous répondre avec certitude.",
            "Les documents que j'ai consultés restent muets à ce sujet.",
            "Désolé, cela ne figure dans aucune des sources.",
            "Je n'ai pas de données concernant le Japon.",
            "Il n'y a aucune trace du Japon dans nos documents.",
            "Les documents ne disent rien à ce propos.",
            "Ma base documentaire ne contient rien sur ce sujet.",
            "Cette question est hors du périmètre des documents.",
            "J'ignore combien de clients nous avons au Japon.",
            "Je n'en ai aucune idée d'après les documents.",
            "L'hydrogène n'est pas un fluide admissible pour le TVS 75.",
        ],
        "non_refusals": [
            "Aucune donnée client n'est stockée hors de l'UE.",
            "Les données sont hébergées hors de France, à Francfort.",
            "Je ne peux pas garantir une disponibilité supérieure à 99,7 %, selon le contrat.",
            "Non, le plan Business n'a aucune limite d'utilisateurs.",
        ],
    },
    "de": {
        "refusals": [
            "Dazu kann ich leider nichts sagen.",
            "Diese Information liegt mir nicht vor.",
            "In den mir vorliegenden Dokumenten ist dazu nichts zu finden.",
            "Das lässt sich anhand der Unterlagen nicht beantworten.",
            "Ich habe keinen Zugriff auf diese Information.",
            "Darüber ist mir nichts bekannt.",
            "Leider kann ich Ihnen dazu keine Auskunft geben.",
            "Eine Angabe zum Japan-Geschäft findet sich in den Dokumenten nicht.",
            "Das geht über die vorliegenden Unterlagen hinaus.",
            "Die Frage kann ich mit den vorhandenen Dokumenten nicht klären.",
            "Hierzu gibt es keine Informationen.",
            "Ich weiß es nicht.",
            "Für Ammoniak ist der TVS 75 nicht ausgelegt.",
            "Den TVS 75 mit Wasserstoff zu betreiben ist nicht zulässig.",
            "Das ist unbekannt; die Dokumente äußern sich dazu nicht.",
        ],
        "non_refusals": [
            "Der Verdichter darf nicht ohne Ölabscheider betrieben werden.",
            "Nein, die Wartung ist nicht im Preis enthalten, sie kostet 450 €.",
            "Das Öl muss nicht vor 4 000 Stunden gewechselt werden, laut Betriebsanleitung "
            "alle 4 000 Betriebsstunden.",
        ],
    },
    "en": {
        "refusals": [
            "I'm sorry, but I don't have information about that.",
            "Based on the provided documents, I cannot answer this question.",
            "That detail isn't covered in the documents.",
            "There's no mention of Japan in the sources.",
            "The documents provided do not contain any pricing information.",
            "I wasn't able to find that in the knowledge base.",
            "The price of the X2 is unknown from the available documents.",
            "Unfortunately, that's outside the scope of the documents.",
            "I have no knowledge of that.",
            "I can't provide that information.",
            "The datasheet gives no value for the sound level.",
            "This model is not meant for hydrogen.",
            "Hydrogen is not a permitted medium for the TVS 75.",
            "The TVS 75 cannot be used with hydrogen.",
            "Nothing about that appears in the provided material.",
            "The list price of the X2 is unspecified in what I have.",
        ],
        "non_refusals": [
            "Customer data is never stored outside the EU.",
            "The X2 is not waterproof, but it is splash-resistant (IP54).",
            "No, there is no setup fee.",
            "The Business plan has no user limit and costs €290 per month.",
        ],
    },
}
for _lang, _sets in MORE_2.items():
    for _kind, _texts in _sets.items():
        DEV[_lang][_kind].extend(_texts)


MORE_3: dict[str, dict[str, list[str]]] = {
    "fr": {
        "refusals": [
            "Je n'ai pas d'information à ce sujet.",
            "Les documents n'abordent pas ce point.",
            "Je ne trouve aucune référence au Japon.",
            "Rien n'est dit sur ce sujet.",
            "Il n'est fait mention nulle part d'un tel chiffre.",
            "Je ne peux pas vous le dire.",
            "Pas d'information disponible sur ce point.",
            "Ce n'est pas documenté.",
            "Je ne dispose d'aucune donnée chiffrée sur le Japon.",
            "Le nombre de clients au Japon n'est pas communiqué.",
            "Aucune réponse ne peut être apportée à partir des documents.",
            "Je ne saurais vous répondre.",
            "Cette donnée n'est pas connue.",
            "Information non disponible.",
            "Le TVS 75 est inadapté à l'hydrogène.",
            "Ce compresseur est incompatible avec l'oxygène.",
        ],
        "non_refusals": [
            "Non, l'installation n'est pas incluse ; elle coûte 450 €.",
            "Le TVS 75 n'est pas livré avec un sécheur.",
            "Les données ne sont pas perdues en cas de panne grâce au PRA.",
            "Non connecté au réseau, l'appareil fonctionne en mode local.",
        ],
    },
    "de": {
        "refusals": [
            "Dazu gibt es in den Unterlagen keine Informationen.",
            "Das steht nicht in den Dokumenten.",
            "Leider habe ich dazu keine Daten.",
            "Diese Frage lässt sich nicht beantworten.",
            "Angaben dazu fehlen.",
            "Das kann ich nicht sagen.",
            "Der Preis ist nicht bekannt.",
            "Hierzu finden sich keine Hinweise.",
            "Ich kann das nicht beurteilen.",
            "Darüber liegen keine Erkenntnisse vor.",
            "Nicht angegeben.",
            "Das ist in den bereitgestellten Informationen nicht enthalten.",
            "Für diesen Einsatzzweck ist der TVS 75 ungeeignet.",
            "Der Betrieb mit Wasserstoff ist unzulässig.",
        ],
        "non_refusals": [
            "Die Garantie deckt keine Verschleißteile ab.",
            "Der TVS 75 braucht keinen Trockner, er hat einen integrierten Kältetrockner.",
            "Unbefugte haben keinen Zugriff auf die Daten.",
        ],
    },
    "en": {
        "refusals": [
            "I'm afraid I don't have that information.",
            "This information is not included in the documents.",
            "The documents make no reference to Japan.",
            "I'm not aware of any such figure.",
            "I couldn't locate this in the knowledge base.",
            "That's not something I can answer.",
            "It isn't stated.",
            "No data available.",
            "The sources don't specify.",
            "Sorry, I have no details on that.",
            "This question cannot be answered from the provided documents.",
            "The TVS 75 is unsuitable for hydrogen.",
            "Hydrogen service is not supported by the TVS 75.",
            "There's nothing I can find on that.",
        ],
        "non_refusals": [
            "The compressor does not support remote start without the portal.",
            "Unauthorised users have no access to customer data.",
            "The unit is not supplied with a dryer.",
        ],
    },
}
for _lang, _sets in MORE_3.items():
    for _kind, _texts in _sets.items():
        DEV[_lang][_kind].extend(_texts)


def _cases(kind: str) -> list[tuple[str, str]]:
    return [(lang, text) for lang, sets in DEV.items() for text in sets[kind]]


@pytest.mark.parametrize(("lang", "text"), _cases("refusals"))
def test_a_refusal_is_recognised_without_a_phrase(lang: str, text: str) -> None:
    found = find_refusal(text, lang, NO_PHRASES)
    assert found is not None, text


@pytest.mark.parametrize(("lang", "text"), _cases("non_refusals"))
def test_a_fact_stated_with_a_negation_is_no_refusal(lang: str, text: str) -> None:
    found = find_refusal(text, lang, DEFAULT_REFUSAL_PHRASES)
    assert found is None, (text, found)


@pytest.mark.parametrize(("lang", "text"), _cases("refusals"))
def test_the_default_phrases_only_add_to_the_constructions(lang: str, text: str) -> None:
    assert is_refusal(text, lang, DEFAULT_REFUSAL_PHRASES)


def test_the_finding_names_the_clause_and_the_construction() -> None:
    found = find_refusal(
        "Le TVS 75 existe en trois variantes. Il n'est pas prévu pour l'hydrogène.",
        "fr",
        NO_PHRASES,
    )
    assert found is not None
    assert (found.clause, found.how, found.language) == (
        "il n'est pas prevu pour l'hydrogene",
        "incompatible",
        "fr",
    )
    found = find_refusal("Dazu liegen mir keine Angaben vor.", "de", NO_PHRASES)
    assert found is not None
    assert found.how == "no information"
    found = find_refusal("The documents don't say.", "en", NO_PHRASES)
    assert found is not None
    assert found.how == "negated report"


def test_a_refusal_in_another_language_than_the_prompt_is_still_one() -> None:
    found = find_refusal("Dazu habe ich in den Unterlagen nichts gefunden.", "en", NO_PHRASES)
    assert found is not None
    assert found.language == "de"


def test_clauses_split_at_punctuation_and_contrast_words() -> None:
    assert clauses("no, the tvk 110 is not available in 400 v; only 230 v.", ["only"]) == [
        "no, the tvk 110 is not available in 400 v",
        "only 230 v",
    ]


WORDS = st.sampled_from(
    ["the", "plan", "costs", "49", "€", "per", "month", "le", "coûte", "der", "kostet", "und"]
)


@given(st.lists(WORDS, max_size=12))
def test_an_answer_without_a_negation_or_absence_word_never_refuses(words: list[str]) -> None:
    text = " ".join(words)
    for lang in ("fr", "de", "en"):
        assert find_refusal(text, lang, NO_PHRASES) is None


def _every_clause_read(text: str, lang: str) -> Refusal | None:
    """find_refusal as it reads without its shortcut: every language's every clause."""
    if not text.strip():
        return None
    prepared = refusal_module._prepared(text)
    for code in dict.fromkeys([lang, *LEXICONS]):
        lexicon = LEXICONS[code]
        # each clause read with the source it carries from the clause before
        for clause, how in refusal_module._clause_findings(prepared, lexicon):
            if how is not None:
                return Refusal(clause, how, code)
    return None


def _lexicon_words() -> list[str]:
    """Every word of every lexicon (a stem completed), and the glue of a sentence."""
    found: list[str] = []
    for lexicon in LEXICONS.values():
        for field in dataclasses.fields(lexicon):
            value = getattr(lexicon, field.name)
            if isinstance(value, (tuple, frozenset)):
                found += [
                    entry.rstrip("*") + ("en" if entry[-1:] == "*" else "") for entry in value
                ]
    glue = "the le der price Preis prix X2 1.8 m/s . , ; : - ( [1] ) but mais aber n't can't"
    return sorted(set(found)) + glue.split()


@given(
    st.lists(st.sampled_from(_lexicon_words()), min_size=1, max_size=25),
    st.sampled_from(list(LEXICONS)),
)
def test_skipping_a_language_whose_words_cannot_refuse_changes_no_finding(
    words: list[str], lang: str
) -> None:
    """A language whose negations, absence and incompatibility words and self-refusals
    none of the answer holds is not cut into clauses: the finding is the one every clause
    read gives, refusal or not, down to the clause and the construction."""
    text = " ".join(words)
    assert find_refusal(text, lang, {}) == _every_clause_read(text, lang)


@pytest.mark.parametrize(("lang", "text"), _cases("refusals") + _cases("non_refusals"))
def test_the_development_set_is_found_as_every_clause_read_finds_it(lang: str, text: str) -> None:
    assert find_refusal(text, lang, {}) == _every_clause_read(text, lang)


def test_an_empty_answer_does_not_refuse() -> None:
    assert find_refusal("   ", "fr", DEFAULT_REFUSAL_PHRASES) is None


def test_precision_and_recall_count_refusals_as_the_positive_class() -> None:
    sets = {"en": {"refusals": ["I don't know.", "The X2 costs €900."], "non_refusals": []}}
    scores = precision_recall(sets, DEFAULT_REFUSAL_PHRASES)
    en = scores["en"]
    assert (en.true_positives, en.false_negatives, en.false_positives) == (1, 1, 0)
    assert en.precision == 1.0
    assert en.recall == 0.5
    assert en.misses == ("The X2 costs €900.",)


@pytest.mark.skipif(not HELDOUT.exists(), reason="no held-apart refusal set")
def test_refusal_heldout_precision_and_recall() -> None:
    scores = precision_recall(read_heldout(HELDOUT.read_text("utf-8")), DEFAULT_REFUSAL_PHRASES)
    failing = {
        lang: (score.precision, score.recall)
        for lang, score in scores.items()
        if (score.precision or 0.0) < MIN_PRECISION or (score.recall or 0.0) < MIN_RECALL
    }
    assert not failing, failing


# What the detector reached on the held-apart set when it was last measured
# (docs/answer-scoring.md): it may do better, never worse.
HELDOUT_FLOOR = {"fr": (0.979, 0.870), "de": (0.980, 0.923), "en": (0.957, 0.865)}


def test_refusal_heldout_never_falls_below_what_it_measured() -> None:
    scores = precision_recall(read_heldout(HELDOUT.read_text("utf-8")), DEFAULT_REFUSAL_PHRASES)
    for lang, (precision, recall) in HELDOUT_FLOOR.items():
        assert (scores[lang].precision or 0.0) >= precision - 0.0005, lang
        assert (scores[lang].recall or 0.0) >= recall - 0.0005, lang


def test_the_refusal_benchmark_prints_precision_and_recall_per_language(tmp_path: Path) -> None:
    labelled = tmp_path / "set.yaml"
    labelled.write_text(
        "fr: {refusals: ['Je ne sais pas.'], non_refusals: ['Le préavis est de 90 jours.']}\n"
        "de: {refusals: ['Dazu liegen keine Angaben vor.', 'Der Preis ist 48 900 €.']}\n",
        "utf-8",
    )
    script = ROOT / "benchmarks" / "bench_refusal.py"
    done = subprocess.run(
        [sys.executable, str(script), str(labelled)], capture_output=True, text=True, check=True
    )
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[2:]}
    assert rows["fr"][-2:] == ["1.000", "1.000"]
    assert rows["de"][-2:] == ["1.000", "0.500"]
