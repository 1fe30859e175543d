"""Layer B — end to end — behind the :class:`~pytest_ragv2.layers.protocol.Layer` protocol.
Its conversation records live in :mod:`pytest_ragv2.layers.chat.run`, its scorers in
:mod:`pytest_ragv2.scoring`, its gates in :mod:`pytest_ragv2.layers.chat.gates`; this module wires
them to the session, the rescoring and the reports (imports are local: the chat scorers load
only when a chat layer runs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from pytest_ragv2.deciding.records import ChatRecord
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

KbPath = Literal["agentic", "systematic", "any"]


class ChatLayer:
    info: LayerInfo = LAYERS["B"]
    case_metrics: tuple[str, ...] = layer_case_metrics(LAYERS["B"])

    def check_systems(self, systems: Mapping[str, SystemSettings], settings: Settings) -> None:
        from pytest_ragv2.layers.chat.run import scoring_options

        try:
            scoring_options(settings.answer_scoring)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{settings.where('answer_scoring')}: {exc}") from None
        missing = sorted(name for name, system in systems.items() if system.chat is None)
        if missing:
            raise ValueError(
                f"--ragv2-layer={self.info.name} runs each system's chat path, and "
                f"{', '.join(missing)} configure(s) none: add "
                "[tool.ragv2.systems.<name>.chat], or leave the system out with --ragv2-systems"
            )

    def serves(self, system: SystemSettings) -> bool:
        return system.chat is not None

    def manifest_extras(self, settings: Settings) -> dict[str, Any]:
        return {}

    def run(self, ctx: RunContext, key: RunKey, loaded: LoadedCase, query: str) -> RunRecord:
        return ctx.run_chat(key, loaded.case, loaded.split)

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
        from pytest_ragv2.layers.chat.run import score_raw_chat_run, scoring_options, skipped_record
        from pytest_ragv2.run.raw_models import ChatRawRun, SkippedRawRun

        if isinstance(raw, SkippedRawRun):
            return skipped_record(key, case=case, split=split, role=raw.role, reason=raw.skipped)
        if not isinstance(raw, ChatRawRun):
            raise ValueError(f"a {key.layer} run holds conversations, not {type(raw).__name__}")
        return score_raw_chat_run(
            key,
            raw,
            case=case,
            split=split,
            allowed_files=allowlist.names if allowlist else None,
            options=scoring_options(
                settings.answer_scoring, cast(KbPath, kb_path), settings.corpus
            ),
        )

    def row_extras(self, records: Sequence[RunRecord]) -> RowFigures:
        from pytest_ragv2.deciding.aggregate import consistency_and_cost

        return {
            "vetoed_runs": sum(
                1 for record in records if isinstance(record, ChatRecord) and record.vetoes
            ),
            **consistency_and_cost(records),
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
        from pytest_ragv2.layers.chat.gates import evaluate_layer_b

        return evaluate_layer_b(
            results,
            settings.answer_gates,
            case_errors,
            configured_roles=configured_roles,
            allowlist_present=allowlist_present,
        )

    def summary_figures(
        self, results: SessionResults, settings: Settings | None = None
    ) -> LayerFigures:
        from pytest_ragv2.deciding.aggregate import judge_counts, rubric_counts
        from pytest_ragv2.deciding.diagnosis import diagnose
        from pytest_ragv2.deciding.quality_score import session_scores
        from pytest_ragv2.layers.chat.gates import vetoes_by_system
        from pytest_ragv2.report.model import LayerFigures

        vetoes = vetoes_by_system(results)
        tripped = {
            name: tuple(kind for kind, runs in kinds.items() if runs)
            for name, kinds in vetoes.items()
        }
        scores = session_scores(self.info.name, results, settings, tripped, answers=True)
        return LayerFigures(
            quality_score=scores,
            diagnosis=diagnose({self.info.name: results.records}, results.recall_k),
            vetoes_by_system=vetoes,
            rubric=rubric_counts(results),
            judge=judge_counts(results) or None,
        )

    def case_table(self, summary: Summary) -> Table:
        from pytest_ragv2.report.tables import answer_case_table

        return answer_case_table(summary.by_case)

    def sections(self, summary: Summary) -> list[tuple[str, Table]]:
        from pytest_ragv2.report.tables import (
            answer_sections,
            diagnosis_sections,
            quality_sections,
        )

        return [
            *answer_sections(summary),
            *quality_sections(summary),
            *diagnosis_sections(summary),
        ]


LAYER = ChatLayer()
