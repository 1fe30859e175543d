"""Layer A — retrieval only — behind the :class:`~pytest_ragv2.layers.protocol.Layer`
protocol. Its scoring lives in :mod:`pytest_ragv2.layers.retrieval.run`, its gates in
:mod:`pytest_ragv2.deciding.gates`; this module wires them to the session, the rescoring and the
reports (imports are local: the registry loads this module on every activated run)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragv2.deciding.records import RetrievalRecord
from pytest_ragv2.layers.registry import LAYERS, LayerInfo
from pytest_ragv2.report.text_table import Table
from pytest_ragv2.scoring.metrics import layer_case_metrics

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings, SystemSettings
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.deciding.results import RowFigures, SessionResults
    from pytest_ragv2.deciding.verdict import GateResult
    from pytest_ragv2.gold.allowlist import Allowlist
    from pytest_ragv2.gold.cases import LoadedCase
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.report.model import LayerFigures, Summary
    from pytest_ragv2.run.context import RunContext
    from pytest_ragv2.run.keys import RunKey
    from pytest_ragv2.run.raw_models import ScoredRawRun


class RetrievalLayer:
    info: LayerInfo = LAYERS["A"]
    case_metrics: tuple[str, ...] = layer_case_metrics(LAYERS["A"])

    def check_systems(self, systems: Mapping[str, SystemSettings], settings: Settings) -> None:
        return None  # a system without a retrieval path records the error on each run

    def serves(self, system: SystemSettings) -> bool:
        return system.retrieval is not None

    def manifest_extras(self, settings: Settings) -> dict[str, Any]:
        return {}

    def run(self, ctx: RunContext, key: RunKey, loaded: LoadedCase, query: str) -> RunRecord:
        return ctx.run_retrieval(key, loaded.case, loaded.split, query)

    def rescore(
        self,
        key: RunKey,
        raw: ScoredRawRun,
        case: Case,
        split: str,
        settings: Settings,
        allowlist: Allowlist | None,
        kb_path: str,
    ) -> RunRecord:
        from pytest_ragv2.layers.retrieval.run import score_raw_run
        from pytest_ragv2.run.raw_models import RetrievalRawRun

        if not isinstance(raw, RetrievalRawRun):
            raise ValueError(f"a {key.layer} run holds retrieval calls, not {type(raw).__name__}")
        return score_raw_run(
            key,
            raw,
            case=case,
            split=split,
            allowed_file_ids=allowlist.file_ids if allowlist else None,
            allowed_filenames=allowlist.filenames if allowlist else None,
            recall_k=settings.item_pass.recall_k,
        )

    def row_extras(self, records: Sequence[RunRecord]) -> RowFigures:
        retrieval = [record for record in records if isinstance(record, RetrievalRecord)]
        return {
            "leaking_runs": sum(1 for record in retrieval if record.leaked),
            "empty_runs": sum(1 for record in retrieval if record.ok and record.returned == 0),
        }

    def gates(
        self,
        results: SessionResults,
        settings: Settings,
        case_errors: Sequence[str],
        *,
        configured_roles: Mapping[str, str],
        allowlist_present: bool,
    ) -> list[GateResult]:
        from pytest_ragv2.deciding.gates import evaluate_layer_a

        return evaluate_layer_a(
            results,
            settings.gates,
            case_errors,
            configured_roles=configured_roles,
            allowlist_present=allowlist_present,
        )

    def summary_figures(
        self, results: SessionResults, settings: Settings | None = None
    ) -> LayerFigures:
        from pytest_ragv2.deciding.diagnosis import diagnose
        from pytest_ragv2.deciding.quality_score import session_scores
        from pytest_ragv2.report.model import LayerFigures

        # layer A's hard veto: a run that returned a file outside the allow-list
        vetoes = {
            name: ("no_leak",) if row.extras.get("leaking_runs") else ()
            for name, row in results.systems.items()
        }
        scores = session_scores(self.info.name, results, settings, vetoes, answers=False)
        return LayerFigures(
            quality_score=scores,
            diagnosis=diagnose({self.info.name: results.records}, results.recall_k),
        )

    def case_table(self, summary: Summary) -> Table:
        from pytest_ragv2.report.tables import retrieval_case_table

        return retrieval_case_table(summary.by_case, summary.recall_k)

    def sections(self, summary: Summary) -> list[tuple[str, Table]]:
        from pytest_ragv2.report.tables import (
            diagnosis_sections,
            quality_sections,
            retrieval_sections,
        )

        return [
            *retrieval_sections(summary),
            *quality_sections(summary),
            *diagnosis_sections(summary),
        ]


LAYER = RetrievalLayer()
