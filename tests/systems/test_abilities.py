"""Adapter abilities: what the preflight, the start-up checks, the ceiling and layer C ask of
a configuration is a Protocol it implements, so an adapter of one's own gains the checks."""

from __future__ import annotations

from typing import Literal

import pytest

from pytest_ragv2.config.settings import SystemSettings
from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.run.attainable import fetch_stored_chunks
from pytest_ragv2.run.preflight import run_preflight
from pytest_ragv2.systems.abilities import (
    AnswersFromPrompt,
    ListsIndexedFiles,
    ListsModels,
    ListsStoredDocuments,
    SearchesWithRetrieval,
    StartsProgram,
)
from pytest_ragv2.systems.chat_limits import ChatAdapterConfig
from pytest_ragv2.systems.command import CommandConfig
from pytest_ragv2.systems.http_json import HttpJsonRetrieval
from pytest_ragv2.systems.librechat_agents import LibreChatAgentsConfig
from pytest_ragv2.systems.openai_chat import OpenAIChatConfig
from pytest_ragv2.systems.rag_api import RagApiRetrieval

ABILITIES = (
    ListsIndexedFiles,
    ListsStoredDocuments,
    StartsProgram,
    ListsModels,
    SearchesWithRetrieval,
    AnswersFromPrompt,
)
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused


def _abilities(config: object) -> set[str]:
    return {ability.__name__ for ability in ABILITIES if isinstance(config, ability)}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            RagApiRetrieval(adapter="rag-api", url=CLOSED),
            {"ListsIndexedFiles", "ListsStoredDocuments"},
        ),
        (HttpJsonRetrieval(adapter="http-json", url=CLOSED), {"ListsStoredDocuments"}),
        (
            OpenAIChatConfig(adapter="openai-chat", url=CLOSED, model="m"),
            {"ListsModels", "SearchesWithRetrieval", "AnswersFromPrompt"},
        ),
        (
            LibreChatAgentsConfig(adapter="librechat-agents", url=CLOSED, agent_id="a"),
            {"ListsModels"},
        ),
        (CommandConfig(adapter="command", argv=["codex"]), {"StartsProgram"}),
    ],
    ids=lambda value: getattr(value, "adapter", ""),
)
def test_each_built_in_adapter_declares_what_it_can_do(config: object, expected: set[str]) -> None:
    assert _abilities(config) == expected


def test_the_model_routes_are_where_each_service_lists_its_models() -> None:
    openai = OpenAIChatConfig(adapter="openai-chat", url="http://h:8080/v1/", model="m")
    agents = LibreChatAgentsConfig(adapter="librechat-agents", url="http://h:3080", agent_id="a")
    assert openai.models_url == "http://h:8080/v1/models"
    assert agents.models_url == "http://h:3080/api/agents/v1/models"


def test_a_listing_says_whose_files_rag_apis_query_route_answers() -> None:
    base = {"adapter": "rag-api", "url": CLOSED, "file_id_map": {"gold": "svc-1"}}
    per_file = RagApiRetrieval.model_validate({**base, "endpoint": "query", "entity_id": "u7"})
    listing = per_file.document_listing("v1", ["gold", "other"])
    assert listing.url == f"{CLOSED}/documents"
    assert list(listing.queried) == ["svc-1", "other"]
    assert listing.owner == "u7"
    assert RagApiRetrieval.model_validate(base).document_listing("v1", ["gold"]).owner is None
    no_listing = HttpJsonRetrieval(adapter="http-json", url=CLOSED)
    assert no_listing.document_listing("v2", ["gold"]) is None
    assert fetch_stored_chunks("v2", no_listing, ["gold"]) is None


class OwnCliConfig(ChatAdapterConfig):
    """A chat adapter of one's own that starts a program."""

    adapter: Literal["own-cli"]
    binary: str

    @property
    def program(self) -> str:
        return self.binary


class OwnHttpConfig(ChatAdapterConfig):
    """A chat adapter of one's own with no ability at all."""

    adapter: Literal["own-http"]


def _chat_system(chat: object) -> SystemSettings:
    # built without validation: the union of chat configurations holds an added adapter
    # only while a session registers it (tests/plugin/test_hooks.py runs that path)
    return SystemSettings.model_construct(role="candidate", chat=chat, retrieval=None)


def test_an_adapter_of_ones_own_that_starts_a_program_gets_the_program_check() -> None:
    own = OwnCliConfig(adapter="own-cli", binary="no-such-own-cli")
    report = run_preflight({"own": _chat_system(own)}, "B", [])
    (stop,) = report.stops
    assert "'no-such-own-cli' is not found on PATH" in stop.message


def test_an_adapter_without_abilities_is_not_probed() -> None:
    report = run_preflight({"own": _chat_system(OwnHttpConfig(adapter="own-http"))}, "B", [])
    assert report.findings == []


@pytest.mark.parametrize(("knowledge_base", "probed"), [("tool", True), ("none", False)])
def test_a_chat_session_checks_the_retrieval_only_of_a_chat_path_that_searches_with_it(
    knowledge_base: str, probed: bool
) -> None:
    chat = OpenAIChatConfig(
        adapter="openai-chat", url=CLOSED, model="m", knowledge_base=knowledge_base
    )
    retrieval = RagApiRetrieval(adapter="rag-api", url="http://127.0.0.1:7")
    system = SystemSettings(role="candidate", chat=chat, retrieval=retrieval)
    report = run_preflight({"v2": system}, "B", ["gold"])
    warned = [finding.message for finding in report.warnings]
    assert any("rag_api at http://127.0.0.1:7" in message for message in warned) is probed
    assert any(f"chat service at {CLOSED}/models" in message for message in warned)


def test_layer_c_serves_the_systems_whose_model_can_answer_from_the_prompt() -> None:
    frozen = load_layer("C")
    openai = OpenAIChatConfig(adapter="openai-chat", url=CLOSED, model="m", system_prompt="x")
    assert frozen.serves(SystemSettings(role="candidate", chat=openai))
    assert not frozen.serves(
        SystemSettings(role="candidate", chat=CommandConfig(adapter="command", argv=["c"]))
    )
    assert not frozen.serves(_chat_system(OwnHttpConfig(adapter="own-http")))
    answering = openai.answering_from_prompt("only the sources")
    assert (answering.knowledge_base, answering.system_prompt) == ("none", "only the sources")
    assert (openai.knowledge_base, openai.system_prompt) == ("tool", "x")
