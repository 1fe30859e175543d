"""The gates and the verdict in pytest's JUnit XML (``--junitxml``), so a CI test tab shows
the promotion decision and not only the runs: a session where every run meets its case and
a gate fails has that gate as a failed testcase.

Each gate is a testcase named after it, in the class ``ragv2.gates.<layer>``; a failed
gate's failure message is its reason. A testcase ``verdict`` in the same class carries the
session's verdict: failed for FAIL, REVIEW, INCOMPLETE, STOPPED and INTERRUPTED, skipped
for one shard of a run (its gates decide nothing: they are skipped too). The reports go to
the JUnit writer alone, not through pytest's hooks: the terminal counts them otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_ragv2.deciding.verdict import GateResult
    from pytest_ragv2.report.model import Summary

CLASS_PATH = "ragv2/gates"
VERDICT_CASE = "verdict"


def _report(layer: str, name: str, outcome: str, message: str, when: str) -> pytest.TestReport:
    path = f"{CLASS_PATH}/{layer}"
    longrepr: Any = None
    if outcome == "failed":
        longrepr = message
    elif outcome == "skipped":
        longrepr = (path, None, message)  # pytest's (file, line, reason) of a skip
    return pytest.TestReport(
        f"{path}::{name}",
        (path, None, name),
        {},
        outcome if when == "call" else "passed",  # type: ignore[arg-type]
        longrepr if when == "call" else None,
        when,  # type: ignore[arg-type]
    )


def _outcome(decision: str, partial: bool) -> str:
    if partial:
        return "skipped"
    return {"pass": "passed", "fail": "failed"}.get(decision, "skipped")


def verdict_message(summary: Summary) -> str:
    verdict = summary.session_verdict
    return f"verdict: {verdict.upper()} (exit status {summary.exit_status})"


def gates_in_junit(
    config: pytest.Config,
    summaries: Mapping[str, Summary],
    gates_by_layer: Mapping[str, Sequence[GateResult]],
) -> None:
    """Each layer's gates and the verdict as testcases of the session's JUnit XML (no-op
    without ``--junitxml``)."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for layer, summary in summaries.items():
        partial = summary.verdict == "partial"
        cases: list[tuple[str, str, str]] = [
            (
                gate.name,
                _outcome(gate.decision, partial),
                gate.reason if not partial else "one shard of a run: its gates decide nothing",
            )
            for gate in gates_by_layer.get(layer, ())
        ]
        verdict = summary.session_verdict
        outcome = "passed" if verdict == "pass" else "skipped" if partial else "failed"
        cases.append((VERDICT_CASE, outcome, verdict_message(summary)))
        for name, case_outcome, message in cases:
            for when in ("call", "teardown"):
                xml.pytest_runtest_logreport(_report(layer, name, case_outcome, message, when))
