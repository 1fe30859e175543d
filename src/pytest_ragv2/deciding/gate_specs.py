"""Every gate declared once: its name, when it holds and the settings that tune it, in the
order a layer decides them. The README's gate tables are made from these declarations
(``gate_table``; ``tests/test_docs.py`` keeps them equal), each settings name is a field of
the gate settings, and a session decides exactly the gates its layer declares
(``tests/layers/test_multi_layer.py``). The gate functions (``deciding/gates.py``,
``layers/chat/gates.py``) compute them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ragv2.layers.registry import LayerInfo


@dataclass(frozen=True, slots=True)
class GateSpec:
    name: str
    holds_when: str  # Markdown, as the README's gate tables print it
    settings: str = "—"  # the settings that tune it, Markdown
    hard: bool = False  # a veto no other figure can buy back

    @property
    def setting_names(self) -> tuple[str, ...]:
        """The settings named (``recall_k``, ``decision_rule``…), values left out."""
        return tuple(re.findall(r"`(\w+)`", self.settings))


# a retrieval layer's gates (``[tool.ragv2.gates]``)
RETRIEVAL_GATES: tuple[GateSpec, ...] = (
    GateSpec(
        "gold_valid",
        "every case and gold file loads",
    ),
    GateSpec(
        "runs_complete",
        "every collected run has a record",
    ),
    GateSpec(
        "results_returned",
        (
            "no system answers every one of its successful runs with an empty list (an "
            "unindexed file id, a token of a user who owns no file), and neither the "
            "candidate nor the baseline failed every run"
        ),
    ),
    GateSpec(
        "no_leak",
        "no candidate run returns a file outside the allow-list",
        hard=True,
    ),
    GateSpec(
        "exact_lookup",
        "candidate exact-metadata success ≥ 0.95",
        settings="`exact_lookup_min`",
    ),
    GateSpec(
        "recall_improvement",
        (
            "the candidate's recall@k (`recall_k`, 5 by default) **demonstrably** exceeds"
            " the baseline's by 0.05: the lower bound of the 95 % interval of the paired "
            "difference (candidate − baseline, per case, over the cases both ran) reaches"
            ' +0.05 — or, with `decision_rule = "test"`, the one-sided paired test of "Δ '
            '> 0.05" is significant at `alpha`'
        ),
        settings="`recall_k` (1, 3, 5 or 10), `recall_improvement_min`, `decision_rule`, `alpha`",
    ),
    GateSpec(
        "category_regression",
        (
            "no category of at least 5 paired cases is **demonstrably** more than 0.05 "
            "worse: the upper bound of its simultaneous interval (Bonferroni over the "
            'categories compared) stays above −0.05 — or, under `"test"`, no '
            'Holm-adjusted one-sided p-value of "Δ < −0.05" is below `alpha`. Smaller '
            "categories are listed with their intervals, not decisive"
        ),
        settings="`category_regression_max`, `category_min_cases`, `decision_rule`, `alpha`",
    ),
    GateSpec(
        "retrieval_p95",
        "candidate retrieval p95 over its successful runs < 2 s (no successful run: fails)",
        settings="`retrieval_p95_max_s`",
    ),
    GateSpec(
        "error_rate",
        "the candidate's **and the baseline's** error rates ≤ 0.01 each (the value is the higher)",
        settings="`error_rate_max`",
    ),
)

# an answer layer's gates (``[tool.ragv2.answer_gates]``), vetoes first after the checks
ANSWER_GATES: tuple[GateSpec, ...] = (
    GateSpec(
        "gold_valid",
        "every case and gold file loads",
    ),
    GateSpec(
        "runs_complete",
        "every collected run has a record",
    ),
    GateSpec(
        "review_settled",
        (
            "every candidate or baseline run the answer scorer could not decide (it says "
            "why, and does not guess) has a reviewer's ruling in "
            "`gold/adjudications.yaml`; until then such a run is left out of every figure"
            " and veto, and when nothing else fails the verdict reads **REVIEW — N run(s)"
            " need a ruling** (exit 1: not promotable until ruled; `ragv2 rescore` then "
            "decides)"
        ),
    ),
    GateSpec(
        "fabricated_identifier",
        (
            "no candidate answer names a project, part, product, certificate or document "
            "identifier found nowhere in its evidence, prompts or conversation (a word "
            'joined to a number by a hyphen is no identifier: "Dynamics-365-Connector"; a'
            " real value given for the wrong claim is that claim's error, not an "
            "invention; an invented phone number, e-mail address or URL is none of the "
            "protocol's identifiers: it fails the run's Accuracy and Grounding instead)"
        ),
        hard=True,
    ),
    GateSpec(
        "incompatible_presented_compatible",
        (
            "no candidate answer makes a forbidden claim carrying this veto (an "
            "incompatible medium, pressure, topology or family presented as compatible)"
        ),
        hard=True,
    ),
    GateSpec(
        "synthetic_as_confirmed",
        "no candidate answer uses a synthetic record without labelling it",
        hard=True,
    ),
    GateSpec(
        "unsupported_high_severity_number",
        (
            "no candidate answer gives a number of a high-severity claim's kind that its "
            "evidence does not hold"
        ),
        hard=True,
    ),
    GateSpec(
        "outside_allowlist",
        "no candidate answer cites, receives or names a file outside the allow-list",
        hard=True,
    ),
    GateSpec(
        "failed_safe_refusal",
        "every candidate run of a case requiring a safe refusal refuses, without a forbidden claim",
        hard=True,
    ),
    GateSpec(
        "constraint_weakened",
        (
            "no candidate answer restates an explicit constraint weaker: a numeric "
            "constraint loosened, or a required claim's obligation or prohibition (\"must "
            'not be adjusted", "nur in Zone 1 oder 2 zulässig") said as a recommendation '
            '("shouldn\'t normally be adjusted", "empfohlen wird Zone 1 oder 2")'
        ),
        hard=True,
    ),
    GateSpec(
        "exact_answer",
        "candidate exact-answer accuracy ≥ 0.90",
        settings="`exact_answer_min`",
    ),
    GateSpec(
        "citation_correctness",
        "candidate citation correctness ≥ 0.95",
        settings="`citation_correctness_min`",
    ),
    GateSpec(
        "case_wins",
        (
            "the candidate wins or ties the baseline on ≥ 80 % of cases (correct runs per"
            " case), with a two-sided sign test printed; a tie counts only when both "
            "systems met the case at least once (two systems that always fail it do not "
            "tie)"
        ),
        settings='`case_wins_min`, `case_wins_ties` (`"both_met"` or `"any"`)',
    ),
    GateSpec(
        "e2e_p95",
        "candidate end-to-end (whole conversation) p95 < 45 s",
        settings="`e2e_p95_max_s`",
    ),
    GateSpec(
        "error_rate",
        "the candidate's and the baseline's failed conversations ≤ 0.01 each",
        settings="`error_rate_max`",
    ),
)


def gates_of(info: LayerInfo) -> tuple[GateSpec, ...]:
    """The gates a layer decides, in order."""
    return ANSWER_GATES if info.chat else RETRIEVAL_GATES


def gate_table(gates: tuple[GateSpec, ...], section: str) -> str:
    """The README's table of ``gates`` (``section``: the settings' table name)."""
    lines = [
        f"| gate | holds when | setting (`[tool.ragv2.{section}]`) |",
        "| --- | --- | --- |",
    ]
    for gate in gates:
        name = f"`{gate.name}`" + (" (hard)" if gate.hard else "")
        lines.append(f"| {name} | {gate.holds_when} | {gate.settings} |")
    return "\n".join(lines)
