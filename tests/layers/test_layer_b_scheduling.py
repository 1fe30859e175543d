"""Layer-B items of one inference slot never overlap, also under ``-n 4 --dist loadgroup``.

A real demo server (its chat endpoint records the start and end of every request) serves two
systems. With both on one slot, no two chat requests may overlap in time; as a control, the
same session with the systems on two slots does overlap (so the check can fail), and the
order of systems alternates from one case to the next.
"""

from __future__ import annotations

import itertools
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragv2_demo.engine import DemoIndex
from ragv2_demo.server import DemoServer

ROBOTICS = Path(__file__).resolve().parents[2] / "corpus" / "nimbus-robotics"
QUESTIONS = [
    "What is the maximum speed of the Nimbus X2?",
    "What is the runtime of the Nimbus X2 on a single battery charge?",
    "How long is the standard warranty on the Nimbus X2?",
    "What is the payload capacity of the Nimbus X2?",
    "How many remote days are allowed per week?",
    "What is the monthly connectivity allowance for remote work?",
]
LATENCY = "latency-25"  # each chat request takes at least 25 ms: overlaps cannot hide


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    with DemoServer(DemoIndex.from_corpus(ROBOTICS)) as running:
        yield running


def _project(pytester: pytest.Pytester, url: str, slots: tuple[str, str]) -> None:
    pytester.mkdir("cases")
    pytester.mkdir("gold")
    cases = [
        f"- id: S{n:02d}\n  category: scheduling\n  layers: [B]\n"
        f"  prompt_en: {json.dumps(question)}\n  required_evidence: []\n"
        for n, question in enumerate(QUESTIONS, start=1)
    ]
    (pytester.path / "cases" / "development.yaml").write_text("".join(cases))
    files = sorted(path for path in ROBOTICS.iterdir() if path.suffix != ".yaml")
    (pytester.path / "gold" / "allowlist.yaml").write_text(
        "files:\n"
        + "".join(f"  - {{file_id: {path.stem}, filename: {path.name}}}\n" for path in files)
    )

    def system(name: str, role: str, variant: str, slot: str) -> str:
        chat_url = f"{url}/chat/{variant}/fault/{LATENCY}"
        return textwrap.dedent(
            f"""\
            [tool.ragv2.systems.{name}]
            role = "{role}"
            slot = "{slot}"
            retrieval = {{adapter = "rag-api", url = "{url}/{variant}"}}
            chat = {{adapter = "openai-chat", url = "{chat_url}", model = "demo-{variant}"}}
            """
        )

    (pytester.path / "pyproject.toml").write_text(
        "[tool.ragv2]\nrepetitions = 2\n\n"
        + system("v1", "baseline", "v1", slots[0])
        + system("v2", "candidate", "v2", slots[1])
    )


# the server stamps a request's end after it has sent the response, so the next request
# of the same slot may start a hair before that stamp; two requests that really run
# together overlap by most of a request (25 ms and more)
JITTER_S = 0.010


def _overlaps(log: list[tuple[str, float, float]]) -> int:
    spans = sorted((start, end) for path, start, end in log if path.startswith("/chat/"))
    return sum(1 for (_, end), (start, _) in itertools.pairwise(spans) if start < end - JITTER_S)


def _run(pytester: pytest.Pytester, server: DemoServer, slots: tuple[str, str], *dist: str) -> int:
    _project(pytester, server.url, slots)
    before = len(server.request_log)
    result = pytester.runpytest("--ragv2-layer=B", "-n", "4", *dist, "--ragv2-seed=7")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    log = server.request_log[before:]
    # every conversation made at least its search round and its answer round
    assert len([entry for entry in log if entry[0].startswith("/chat/")]) >= 2 * 6 * 2 * 2
    return _overlaps(log)


@pytest.mark.parametrize("dist", [(), ("--dist", "loadgroup"), ("--dist", "load")])
def test_one_slot_never_overlaps_under_four_workers(
    pytester: pytest.Pytester, server: DemoServer, dist: tuple[str, ...]
) -> None:
    assert _run(pytester, server, ("local-model", "local-model"), *dist) == 0


def test_two_slots_do_overlap_so_the_check_can_fail(
    pytester: pytest.Pytester, server: DemoServer
) -> None:
    assert _run(pytester, server, ("slot-a", "slot-b")) > 0


def test_systems_alternate_order_from_one_case_to_the_next(
    pytester: pytest.Pytester, server: DemoServer
) -> None:
    _project(pytester, server.url, ("local-model", "local-model"))
    result = pytester.runpytest("--ragv2-layer=B", "--collect-only", "-q", "--ragv2-seed=7")
    names = [line.split("::")[1] for line in result.outlines if "::" in line]
    first_system_per_case: list[str] = []
    seen: set[str] = set()
    for name in names:
        case, system = name.split("[")[0], name.split("[")[1].split("-")[0]
        if case not in seen:
            seen.add(case)
            first_system_per_case.append(system)
    assert len(first_system_per_case) == 6
    assert all(a != b for a, b in itertools.pairwise(first_system_per_case))


@pytest.mark.parametrize(
    ("node_id", "system"),
    [
        ("cases/development.yaml::B07[demo-v2-de-r3]", "demo-v2"),
        ("cases/development.yaml::B07[demo-v2-de-r3]@ragv2-slot-x", "demo-v2"),
        ("cases/development.yaml::B07[demo-v2-pt-BR-r1]", "demo-v2"),
        ("cases/development.yaml::B07[demo-v2-extra-en-r1]", "demo-v2-extra"),
        ("cases/a.yaml::T01[v1-fr-r12]", "v1"),
        ("cases/development.yaml::invalid-cases", None),
        ("tests/test_x.py::test_a[1]", None),
        ("tests/test_x.py::test_a[a-b-c]", None),
    ],
)
def test_the_system_is_read_from_the_node_id(node_id: str, system: str | None) -> None:
    from pytest_ragv2.plugin.xdist import system_of_node

    assert system_of_node(node_id, ["v1", "demo-v2", "demo-v2-extra"]) == system
