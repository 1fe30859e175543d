"""Configured secrets kept out of everything pytest itself prints or writes.

The adapters scrub what they record. This module covers pytest's own output: with ``-l``
(``--showlocals``) or ``--full-trace`` a traceback shows the arguments and locals of its
frames (a header dict holding the bearer token), and so do the Ctrl-C traceback, an internal
error and a collection error. Those reach the terminal, JUnit XML, pytest-html and, under
xdist, the controller over the wire. :class:`TraceScrubber` (registered once a layer is
active) replaces every secret in them before anyone reads them: in the report objects
themselves (so every consumer, in every process, sees the scrubbed text), in the internal
error's representation and in the terminal reporter's Ctrl-C memo.

The secrets (``pytest_ragv2.systems.secret_policy``): the values of the environment variables a
system's configuration names (any ``*_env`` setting, every ``env_pass`` variable but
``PATH``, ``HOME`` and ``LANG``), the credentials in its URLs (user info, credential-named
parameters), and every secret an adapter used in this process (:mod:`secret_registry`: a
JWT signed at run time). They are matched as ``secret_policy.scrub`` matches them (by
length), in every form ``secret_values`` gives (percent-encoded, JSON-escaped, base64), plus
the forms a traceback shows: the value's ``repr`` (quoted, escaped) and pytest's shortened
``saferepr`` (``'Bearer eyJhbGc...Qssw5c'``), whose fragments at the cut are replaced as
well. The same forms are kept out of every log record (``pytest_ragv2.plugin.log_secrets``,
installed by ``register``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import Any

import pytest
from _pytest._code.code import ExceptionInfo, ReprFileLocation, TerminalRepr
from _pytest._io import TerminalWriter
from _pytest.reports import BaseReport

from pytest_ragv2.systems import secrets as secret_registry
from pytest_ragv2.systems.secret_policy import (
    env_pass_values,
    scrub_text,
    secret_values,
    url_secrets,
    urls_in,
)


def configured_secrets(systems: Mapping[str, Any], environ: Mapping[str, str]) -> list[str]:
    """The secrets the systems' configuration names: the values of its ``*_env`` variables
    and of its ``env_pass`` variables (but ``PATH``, ``HOME``, ``LANG``), and the
    credentials of every URL it holds (user info and credential-named parameters)."""
    variables: list[str] = []
    passed: list[str] = []
    urls: list[str] = []
    for system in systems.values():
        dumped = system.model_dump() if hasattr(system, "model_dump") else system
        _walk(dumped, "", False, (variables, passed, urls))
    values = [environ.get(variable, "") for variable in variables]
    values += env_pass_values(passed, environ)
    values += [secret for url in urls for secret in url_secrets(url)]
    return [value for value in dict.fromkeys(values) if value]


def _walk(
    value: Any, key: str, naming: bool, found: tuple[list[str], list[str], list[str]]
) -> None:
    """Collect, from a dumped configuration, the variable names under a ``*_env`` key (a
    name, a list or a header -> name map), those of ``env_pass``, and the URLs in any
    string."""
    variables, passed, urls = found
    naming = naming or key.endswith("_env")
    if isinstance(value, Mapping):
        for name, item in value.items():
            _walk(item, str(name), naming, found)
    elif isinstance(value, list | tuple):
        if key == "env_pass":
            passed += [name for name in value if isinstance(name, str)]
            return
        for item in value:
            _walk(item, key, naming, found)
    elif isinstance(value, str):
        if naming:
            variables.append(value)
        elif "://" in value:
            urls += urls_in(value)


def trace_forms(values: Iterable[str]) -> list[str]:
    """The strings to scrub from a traceback for ``values``: what ``secret_values`` gives
    (each value, a bearer's token, encoded forms) plus each one's ``repr``, quoted and
    unquoted (a quote or backslash in it is escaped there). Longest first."""
    forms = set(secret_values(values, remember=False))
    for value in list(forms):
        shown = repr(value)
        forms.update((shown, shown[1:-1]))
    return sorted((form for form in forms if form), key=len, reverse=True)


def scrub_in_place(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` (a traceback representation, or a part of one) with every string in it
    scrubbed; pytest's representation objects are changed in place and returned."""
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, list):
        return [scrub_in_place(item, secrets) for item in value]
    if isinstance(value, tuple):
        return tuple(scrub_in_place(item, secrets) for item in value)
    if isinstance(value, TerminalRepr | ReprFileLocation):
        for name, item in list(vars(value).items()):
            object.__setattr__(value, name, scrub_in_place(item, secrets))
    return value


class ScrubbedRepr(TerminalRepr):
    """A representation pytest could not be trusted to render clean: its scrubbed text,
    with the crash line pytest's summaries read (``reprcrash``)."""

    def __init__(self, text: str, reprcrash: ReprFileLocation | None) -> None:
        self.text = text
        self.reprcrash = reprcrash

    def toterminal(self, tw: TerminalWriter) -> None:
        for line in self.text.split("\n"):
            tw.line(line)


def scrub_representation(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` scrubbed in place, then rendered and checked: anything still carrying a
    secret (a part of the representation this module does not know) becomes its scrubbed
    text, so a secret never gets through whatever pytest adds to its representations."""
    value = scrub_in_place(value, secrets)
    if not isinstance(value, TerminalRepr):
        return value
    rendered = str(value)
    clean = scrub_text(rendered, secrets)
    if clean == rendered:
        return value
    crash = getattr(value, "reprcrash", None)
    return ScrubbedRepr(clean, crash if isinstance(crash, ReprFileLocation) else None)


class TraceScrubber:
    """The hooks that scrub pytest's own reports and tracebacks (this module's docstring)."""

    def __init__(self, config: pytest.Config, configured: Sequence[str]) -> None:
        self.config = config
        self.configured = tuple(configured)
        self._known: tuple[int, list[str]] | None = None  # (registry version, forms)

    def secrets(self) -> list[str]:
        """Every form to scrub now: the configured secrets and those used so far (made
        again only when an adapter has used a new one: asked for at every log record)."""
        known = self._known
        version = secret_registry.version()
        if known is None or known[0] != version:
            values = frozenset(self.configured) | secret_registry.remembered()
            known = (version, trace_forms(sorted(values)))
            self._known = known  # one assignment: a thread reads the old pair or the new
        return known[1]

    def scrub_report(self, report: BaseReport) -> None:
        secrets = self.secrets()
        if not secrets:
            return
        if report.longrepr is not None:
            report.longrepr = scrub_representation(report.longrepr, secrets)
        report.sections = [
            (scrub_text(title, secrets), scrub_text(content, secrets))
            for title, content in report.sections
        ]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self) -> Generator[None, BaseReport, BaseReport]:
        report = yield
        self.scrub_report(report)
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self) -> Generator[None, BaseReport, BaseReport]:
        report = yield
        self.scrub_report(report)
        return report

    # reports made elsewhere (xdist's controller receives its workers', and makes its own
    # for a crashed worker) pass here before junitxml, pytest-html and the terminal read them
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: BaseReport) -> None:
        self.scrub_report(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report: BaseReport) -> None:
        self.scrub_report(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_internalerror(self, excrepr: Any) -> None:
        # the terminal (and an xdist worker's link to its controller) print this very
        # object after this hook: it can only be scrubbed where it stands
        secrets = self.secrets()
        if secrets:
            scrub_in_place(excrepr, secrets)

    @pytest.hookimpl(wrapper=True)
    def pytest_keyboard_interrupt(
        self, excinfo: ExceptionInfo[BaseException]
    ) -> Generator[None, object, object]:
        result = yield
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        memo = getattr(reporter, "_keyboardinterrupt_memo", None)
        secrets = self.secrets()
        if reporter is not None and memo is not None and secrets:
            reporter._keyboardinterrupt_memo = scrub_representation(memo, secrets)
        return result


def register(config: pytest.Config, systems: Mapping[str, Any]) -> None:
    """Scrub pytest's output and every log record of the session's secrets from now on."""
    import os

    from pytest_ragv2.plugin import log_secrets

    scrubber = TraceScrubber(config, configured_secrets(systems, os.environ))
    config.pluginmanager.register(scrubber, "ragv2-trace-secrets")
    config.add_cleanup(log_secrets.install(scrubber.secrets))
