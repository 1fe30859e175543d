"""The layers pytest-ragv2 runs, declared once: the facts every part of a session may read
without importing a layer (:class:`LayerInfo`). Code outside the layer modules asks the
registry, never ``layer == "A"``; what a layer does is behind the protocol of
:mod:`pytest_ragv2.layers.protocol`.

A leaf: it imports nothing of the package, so that the configuration, the run context and
the reports can read the facts without an import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LayerInfo:
    """What every part of a session may know of a layer without importing it."""

    name: str  # "A"
    title: str  # "retrieval only"
    module: str  # the module whose ``LAYER`` implements :class:`Layer`
    chat: bool  # runs systems' chat paths: one inference slot at a time (slot scheduling)
    default_repetitions: int
    # the per-case metric whose interval the system tables show; "{k}": the gates' recall_k
    headline_metric: str
    answer_models_only: bool = False  # its systems are answer models (no search, no runner)
    # how the failure diagnosis finds an answer layer's evidence: its systems search for it
    # themselves (their retrieval-layer runs say whether it was found), or each record
    # carries the recall of the evidence it was given (this metric's name)
    searches: bool = False
    evidence_metric: str | None = None

    def headline(self, recall_k: int = 5) -> str:
        """The headline metric's name, ``recall@{recall_k}`` at a retrieval layer."""
        return self.headline_metric.format(k=recall_k)


LAYERS: Mapping[str, LayerInfo] = {
    "A": LayerInfo(
        name="A",
        title="retrieval only",
        module="pytest_ragv2.layers.retrieval.layer",
        chat=False,
        default_repetitions=1,
        headline_metric="recall@{k}",
    ),
    "B": LayerInfo(
        name="B",
        title="end to end",
        module="pytest_ragv2.layers.chat.layer",
        chat=True,
        default_repetitions=5,
        headline_metric="exact_answer",
        searches=True,
    ),
    "C": LayerInfo(
        name="C",
        title="frozen evidence",
        module="pytest_ragv2.layers.frozen.layer",
        chat=True,
        default_repetitions=5,
        headline_metric="exact_answer",
        answer_models_only=True,
        evidence_metric="evidence_recall",
    ),
}


class UnknownLayer(ValueError):
    pass


def layer_info(name: str) -> LayerInfo:
    try:
        return LAYERS[name]
    except KeyError:
        known = ", ".join(f"{info.name} ({info.title})" for info in LAYERS.values())
        raise UnknownLayer(
            f"layer {name} is not available in this version; the layers are {known}"
        ) from None


def demo_layer(layers: Sequence[str]) -> str:
    """The layer the embedded demo systems are configured for in a session of ``layers``:
    the one that needs most of them — chat paths with the reference runner, else answer
    models, else retrieval paths."""
    infos = [layer_info(layer) for layer in layers]
    with_runner = [info.name for info in infos if info.chat and not info.answer_models_only]
    answer_models = [info.name for info in infos if info.chat]
    for found in (with_runner, answer_models):
        if found:
            return found[0]
    return infos[0].name if infos else "A"
