"""The one secret policy of every channel: what counts as a credential, the forms it may
be written in, and how it is replaced.

A secret is a value a system's configuration hands to a service: every ``*_env`` value
(headers, API keys, the JWT signing secret, query parameters), every ``env_pass`` value but
``PATH``, ``HOME`` and ``LANG``, a URL's user name and password, and the value of a URL's
query parameter named like a credential (``credential_name``); and every credential made
from one at run time (a signed JWT, the ``Authorization: Basic`` token of a URL's user
info). Each is replaced as written, percent-encoded, JSON-escaped and base64-encoded
(``secret_values``), by its length (``scrub``), in the raw runs and the manifest (the
adapters and ``redact_url``), in pytest's reports and tracebacks
(``pytest_ragv2.plugin.trace_secrets``) and in every log record
(``pytest_ragv2.plugin.log_secrets``).

No httpx here: the command adapter scrubs with it too.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_ragv2.systems import secrets as secret_registry

REDACTED = "<redacted>"
# the marker as a redacted URL carries it: a URL redacted twice finds no secret in it
_MARKERS = frozenset({REDACTED, "%3Credacted%3E", "%3credacted%3e"})
MIN_SCRUBBED_CHARS = 8  # replaced wherever it occurs
MIN_WORD_CHARS = 4  # shorter: replaced only as a whole string


# a command system gets these whatever its env_pass says: no secret (a path, a locale)
ALWAYS_PASSED_ENV = ("PATH", "HOME", "LANG")
# an env_pass value that is a plain setting, not a credential: a switch or a small number
# ("1", "true", "8080") would otherwise take that word out of every answer it appears in
_PLAIN_SETTING = re.compile(r"(?i)true|false|yes|no|on|off|none|null|[0-9]{1,7}")


def env_pass_values(env_pass: Sequence[str], environ: Mapping[str, str]) -> list[str]:
    """The values of a command's ``env_pass`` variables that are secrets: every one set,
    but those of ``ALWAYS_PASSED_ENV`` and plain settings (a switch, a small number)."""
    values = (environ.get(name, "") for name in env_pass if name not in ALWAYS_PASSED_ENV)
    return [value for value in values if value and not _PLAIN_SETTING.fullmatch(value)]


def scrub(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with every secret inside its strings replaced, by its length: one of
    ``MIN_SCRUBBED_CHARS`` or more wherever it occurs; a shorter one wherever it stands as
    a whole word (an echoed "x7k2" is caught, "x7k2" inside "ax7k29" is not); one under
    ``MIN_WORD_CHARS`` only as a whole string (a header "2" must not take every "2" out of
    an answer that is then scored). Dict keys are scrubbed as well."""
    if not secrets:
        return value
    plan = _plan(secrets if isinstance(secrets, tuple) else tuple(secrets))
    if isinstance(value, str):
        return plan.text(value)
    return plan.walk(value)


class _Plan:
    """One list of secrets sorted by how each is matched (``scrub``), made once per list:
    the hot path (every body, every stream frame) then spends only the searches."""

    __slots__ = ("anywhere", "exact", "shortest", "words")

    def __init__(self, secrets: tuple[str, ...]) -> None:
        ordered = sorted(dict.fromkeys(secrets), key=len, reverse=True)  # longest first
        self.anywhere = tuple(s for s in ordered if len(s) >= MIN_SCRUBBED_CHARS)
        self.words = tuple(s for s in ordered if MIN_WORD_CHARS <= len(s) < MIN_SCRUBBED_CHARS)
        self.exact = frozenset(s for s in ordered if 0 < len(s) < MIN_WORD_CHARS)
        self.shortest = min((len(s) for s in self.anywhere + self.words), default=1 << 30)

    def text(self, value: str) -> str:
        if len(value) >= self.shortest:
            for secret in self.anywhere:
                if secret in value:
                    value = value.replace(secret, REDACTED)
            for secret in self.words:
                if secret in value:
                    value = _whole_word(secret).sub(REDACTED, value)
        if value in self.exact:
            return REDACTED
        return value

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.walk(key): self.walk(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.walk(item) for item in value]
        return value


@functools.lru_cache(maxsize=256)
def _plan(secrets: tuple[str, ...]) -> _Plan:
    return _Plan(secrets)


@functools.lru_cache(maxsize=256)
def _whole_word(secret: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![0-9A-Za-z]){re.escape(secret)}(?![0-9A-Za-z])")


def secret_values(values: Iterable[str], *, remember: bool = True) -> list[str]:
    """The strings to scrub for a set of credentials: each value; for "Bearer <token>" the
    token alone (for "Basic <base64>", the decoded "user:password" and its password too);
    and the forms a server may echo them in: percent-encoded, JSON-escaped and, for one of
    ``MIN_WORD_CHARS`` or more, base64-encoded. Every length counts (``scrub`` says how a
    short one is matched)."""
    given = tuple(values)
    found, secrets = _secret_forms(given)
    if remember:
        # the values, not their encoded forms: the tracebacks' scrubber derives the forms
        # again, and remembering those would encode the encodings without end
        secret_registry.remember(found)  # pytest's tracebacks are scrubbed of them too
    return list(secrets)


@functools.lru_cache(maxsize=1024)
def _secret_forms(values: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the values with their tokens, every form to scrub): ``secret_values``, kept per
    set of values (an adapter asks for the same few at every call)."""
    found: list[str] = []
    for value in values:
        if not value or value in _MARKERS:
            continue  # the marker itself is no secret: scrubbing it would never end
        found.append(value)
        scheme, _, token = value.partition(" ")
        if token and scheme.isalpha():
            found.append(token)
            if scheme.lower() == "basic":
                found += _basic_parts(token)
    encoded = [form for value in found for form in _encoded_forms(value) if form != value]
    # longest first: a secret inside a longer one is replaced after it, never before
    secrets = sorted(dict.fromkeys(found + encoded), key=len, reverse=True)
    return tuple(dict.fromkeys(found)), tuple(secrets)


def _encoded_forms(value: str) -> list[str]:
    """How a server or a log may show ``value``: percent-encoded (every reserved character,
    or all but "/", as a path is), JSON-escaped and (from ``MIN_WORD_CHARS`` characters)
    base64-encoded without its padding."""
    forms = [urllib.parse.quote(value, safe=""), json.dumps(value)[1:-1]]
    if "/" in value:
        forms.append(urllib.parse.quote(value))
    if len(value) >= MIN_WORD_CHARS:
        forms.append(base64_form(value))
    return forms


def base64_form(value: str) -> str:
    """``value``'s UTF-8 bytes base64-encoded, the padding left out (an echo may drop it;
    with it, the form is still found and the "=" left behind)."""
    return base64.b64encode(value.encode("utf-8")).decode("ascii").rstrip("=")


def basic_credential(user: str, password: str) -> str:
    """The base64 token an ``Authorization: Basic`` header carries for these user info
    parts (as httpx builds it from a URL's)."""
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def _basic_parts(token: str) -> list[str]:
    """A Basic token's decoded "user:password" and its password (nothing if not base64)."""
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return []
    password = decoded.partition(":")[2]
    return [decoded, password] if password else [decoded]


# the words of a parameter or variable name that make its value a credential: the name's
# words (split at "_", "-", ".", spaces and camelCase humps) are compared whole, so "pass",
# "db_pass" and "passPhrase" are credentials and "passage", "bypass" or "keyword" are not
# fmt: off
CREDENTIAL_WORDS = frozenset(
    {
        "key", "apikey", "token", "secret", "sig", "signature", "code", "password",
        "passwd", "pwd", "pass", "passphrase", "passcode", "auth", "authorization", "jwt",
        "credential", "credentials", "session", "sessionid", "accesstoken", "authtoken",
        "apitoken", "sessiontoken", "clientsecret", "privatekey", "secretkey",
    }
)
# fmt: on
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@functools.lru_cache(maxsize=1024)
def credential_name(name: str) -> bool:
    """Whether a query parameter or an environment variable so named holds a credential
    (``CREDENTIAL_WORDS``): ``api_key``, ``X-Amz-Signature``, ``accessToken``, ``jwt``,
    ``pass``, ``LOCAL_LLM_KEY``."""
    words = [word.lower() for word in _NAME_WORDS.findall(name)]
    return any(word in CREDENTIAL_WORDS for word in words)


@functools.lru_cache(maxsize=256)
def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials a URL carries: its user info (the user name — a token is often given
    as one — and the password) with the token of the ``Authorization: Basic`` header an
    HTTP client makes of them, and the values of the query (or fragment) parameters named
    like credentials (``credential_name``); each as written in the URL and decoded (a
    system's URLs are few and asked for at every call: kept)."""
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port  # a malformed netloc raises here
    except ValueError:
        return ()
    found: list[str] = []
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at and userinfo:
        raw_user, _, raw_password = userinfo.partition(":")
        user, password = urllib.parse.unquote(raw_user), urllib.parse.unquote(raw_password)
        found += [user, raw_user, password, raw_password]
        if user not in _MARKERS and password not in _MARKERS:
            found.append(basic_credential(user, password))
    for pair in f"{parts.query}&{parts.fragment}".split("&"):
        name, _, raw = pair.partition("=")
        if raw and credential_name(urllib.parse.unquote_plus(name)):
            found += [urllib.parse.unquote(raw), raw]
    return tuple(value for value in dict.fromkeys(found) if value and value not in _MARKERS)


@functools.lru_cache(maxsize=256)
def redact_url(url: str) -> str:
    """``url`` as a record may show it: its user info (user name and password) and the
    values of its credential-named parameters replaced, and any other occurrence of them."""
    secrets = url_secrets(url)
    if not secrets:
        return url
    parts = urllib.parse.urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    netloc = parts.netloc
    if at and userinfo:
        _, colon, password = userinfo.partition(":")
        netloc = REDACTED + (f":{REDACTED}" if colon and password else colon) + "@" + host
    shown = parts._replace(
        netloc=netloc, query=_redacted_pairs(parts.query), fragment=_redacted_pairs(parts.fragment)
    )
    return str(scrub(urllib.parse.urlunsplit(shown), secret_values(secrets, remember=False)))


def _redacted_pairs(text: str) -> str:
    """A query string (or fragment) with each credential-named parameter's value replaced."""
    if "=" not in text:
        return text
    pairs = []
    for pair in text.split("&"):
        name, equals, raw = pair.partition("=")
        secret = equals and raw and credential_name(urllib.parse.unquote_plus(name))
        pairs.append(f"{name}={REDACTED}" if secret else pair)
    return "&".join(pairs)


_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^\s'\"<>]+", re.IGNORECASE)


def urls_in(text: str) -> list[str]:
    """Every URL written inside ``text``."""
    return _URL.findall(text)


def redact_urls_in(text: str) -> str:
    """Every URL inside ``text`` (a message) with its credentials replaced."""
    return _URL.sub(lambda found: redact_url(found.group()), text)


CUT = "..."  # what pytest's saferepr puts where it shortened a repr
MIN_FRAGMENT_CHARS = 4  # a shorter piece of a secret at a cut is left alone


def scrub_text(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret replaced (``systems.base.scrub``'s rules), and the piece of a
    secret that ends just before, or starts just after, a saferepr cut ``...``."""
    text = str(scrub(text, secrets))
    if CUT not in text:
        return text
    pieces = text.split(CUT)
    for secret in secrets:
        if len(secret) <= MIN_FRAGMENT_CHARS:
            continue
        for index in range(len(pieces) - 1):
            before = _head_at_end(pieces[index], secret)
            if before:
                pieces[index] = pieces[index][:-before] + REDACTED
            after = _tail_at_start(pieces[index + 1], secret)
            if after:
                pieces[index + 1] = REDACTED + pieces[index + 1][after:]
    return CUT.join(pieces)


def _head_at_end(text: str, secret: str) -> int:
    """The length of the longest start of ``secret`` (``MIN_FRAGMENT_CHARS`` or more, not
    all of it) that ``text`` ends with (0: none). Such a start ends with ``text``'s last
    ``MIN_FRAGMENT_CHARS`` characters, so only where those stand in ``secret`` is looked at
    (a search per secret, not a comparison per length: a traceback holds many cuts)."""
    if len(text) < MIN_FRAGMENT_CHARS:
        return 0
    tail = text[-MIN_FRAGMENT_CHARS:]
    longest = min(len(text), len(secret) - 1)
    found = 0
    start = secret.find(tail)
    while start >= 0 and start + MIN_FRAGMENT_CHARS <= longest:
        length = start + MIN_FRAGMENT_CHARS
        if text.endswith(secret[:length]):
            found = length
        start = secret.find(tail, start + 1)
    return found


def _tail_at_start(text: str, secret: str) -> int:
    """The length of the longest end of ``secret`` (``MIN_FRAGMENT_CHARS`` or more, not all
    of it) that ``text`` starts with (0: none); found as ``_head_at_end`` finds a start."""
    if len(text) < MIN_FRAGMENT_CHARS:
        return 0
    head = text[:MIN_FRAGMENT_CHARS]
    longest = min(len(text), len(secret) - 1)
    start = secret.find(head, 1)
    while start >= 0 and len(secret) - start >= MIN_FRAGMENT_CHARS:
        length = len(secret) - start
        if length <= longest and text.startswith(secret[start:]):
            return length  # the first is the longest
        start = secret.find(head, start + 1)
    return 0
