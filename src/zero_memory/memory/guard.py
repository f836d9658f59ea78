"""The content guard: refuse text that carries a known credential format.

Every text field of a write passes through ``check_fields`` before anything is
embedded, stored or sent to a model. A finding is rejected, never redacted: a
redacted memory would keep the shape of a secret and the agent would not learn
to leave it out.

Detection uses detect-secrets' regex plugins where one covers a format, plus a
few precise patterns for formats it lacks. No entropy detector runs: ordinary
memory text is full of git hashes, UUIDs and base64 that an entropy test would
flag. The error names the field and the detector and shows at most the first
four characters of the finding and its length, so the secret is never echoed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from zero_memory import errors

_REVEAL = 4
_TOKEN = r"[A-Za-z0-9_-]"
# A token that starts mid-word (inside a base64 blob, say) is not a key.
_START = r"(?<![A-Za-z0-9_-])"

_GITHUB_PAT = re.compile(r"github_pat_[A-Za-z0-9_]{82}")
_OPENAI_SCOPED = re.compile(_START + r"sk-(?:proj|svcacct|admin)-" + _TOKEN + r"{40,}")
_ANTHROPIC = re.compile(_START + r"sk-ant-[a-z]+[0-9]*-" + _TOKEN + r"{32,}")
_GOOGLE = re.compile(_START + r"AIza" + _TOKEN + r"{35}")
# Headers detect-secrets does not list; its own list covers the rest.
_EXTRA_KEY_HEADERS = (
    re.compile(r"BEGIN ENCRYPTED PRIVATE KEY"),
    re.compile(r"PuTTY-User-Key-File-3"),
)
# A header alone (a note on key formats) is not a key: require key material after
# it, starting a line, right after the dashes, or after a "\n" escape (a key pasted
# from an env file). A run of 40 base64 characters is far shorter than any key.
_KEY_BODY = re.compile(r"(?:^|-----|\\n)[ \t]*[A-Za-z0-9+/]{40}", re.MULTILINE)
_KEY_BODY_WITHIN = 400
# Anchored on the literal "://" so a long run of word characters costs one pass.
# The user may be empty (redis://:password@host); the password may not.
_URL_CREDENTIALS = re.compile(r"://[^\s:/?#\[\]@]*:([^\s/?#\[\]@]+)@")
# Documentation placeholders, not credentials: postgres://user:${PGPASSWORD}@host.
_PLACEHOLDER = re.compile(
    r"[$<{%\[].*|[*xX.•…_-]+|(?i:(?:your|my)?[_-]?(?:password|passwd|pass|pwd|pw|secret|token|redacted))"
)
_GIT_SHA = re.compile(r"[0-9a-f]{40}")
_AWS_KEY_ID_LENGTH = 20


@dataclass(frozen=True, slots=True)
class Finding:
    """A credential found in text: which detector, and a sample that does not leak it."""

    detector: str
    masked: str


@dataclass(frozen=True, slots=True)
class _Detector:
    # Cheap substring prefilter: the detector runs only if one of these occurs.
    hints: tuple[str, ...]
    find: Callable[[str], Finding | None]
    # Match the hints against the lower-cased text (for case-insensitive patterns).
    casefold: bool = False


def check_fields(fields: Mapping[str, str | None]) -> None:
    """Refuse the first field that carries a credential.

    Raises ``validation_failed: secret_content_rejected: <field> <detector> <masked>``.
    Fields are checked in the mapping's order; ``None`` fields are skipped.
    """
    for field, text in fields.items():
        if not text:
            continue
        finding = find_secret(text)
        if finding is not None:
            raise errors.validation(
                f"{field} {finding.detector} {finding.masked}",
                subcode=errors.SECRET_CONTENT_REJECTED,
            )


def find_secret(text: str) -> Finding | None:
    """The first credential in ``text``, by detector order, or ``None``."""
    lowered: str | None = None
    for detector in _detectors():
        haystack = text
        if detector.casefold:
            lowered = text.lower() if lowered is None else lowered
            haystack = lowered
        if not any(hint in haystack for hint in detector.hints):
            continue
        finding = detector.find(text)
        if finding is not None:
            return finding
    return None


def _mask(secret: str) -> str:
    """The first few characters and the length: enough to find it, too little to use it."""
    return f"{secret[:_REVEAL]}…({len(secret)} chars)"


def _first(detector: str, candidates: Iterable[str]) -> Finding | None:
    secret = next(iter(candidates), None)
    return None if secret is None else Finding(detector, _mask(secret))


def _url_credentials(text: str) -> Finding | None:
    for match in _URL_CREDENTIALS.finditer(text):
        password = match.group(1)
        if not _PLACEHOLDER.fullmatch(password):
            # Passwords are short: even four characters would give too much away.
            return Finding("url_credentials", f"…({len(password)} chars)")
    return None


@cache
def _detectors() -> tuple[_Detector, ...]:
    """Built on first use: importing detect-secrets costs about 100 ms."""
    # Only each plugin's regex API (analyze_string / denylist) is used: analyze_line
    # consults detect-secrets' global settings and may verify a key over the network.
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.stripe import StripeDetector

    aws = AWSKeyDetector()
    github = GitHubTokenDetector()
    jwt = JwtTokenDetector()
    openai = OpenAIDetector()
    slack = SlackDetector()
    stripe = StripeDetector()
    key_headers = (*PrivateKeyDetector().denylist, *_EXTRA_KEY_HEADERS)

    def private_key(text: str) -> Finding | None:
        for header in key_headers:
            for match in header.finditer(text):
                if _KEY_BODY.search(text, match.end(), match.end() + _KEY_BODY_WITHIN):
                    return Finding("private_key", match.group(0).removeprefix("BEGIN "))
        return None

    def aws_key(text: str) -> Finding | None:
        for secret in aws.analyze_string(text):
            # The plugin finds 20-character key ids and, next to "aws ... key", quoted
            # 40-character secret access keys; a quoted commit hash is not one.
            if len(secret) == _AWS_KEY_ID_LENGTH:
                return Finding("aws_access_key", _mask(secret))
            if not _GIT_SHA.fullmatch(secret):
                return Finding("aws_secret_key", _mask(secret))
        return None

    def slack_token(text: str) -> Finding | None:
        secret = next(slack.analyze_string(text), None)
        if secret is None:
            return None
        is_webhook = secret.lower().startswith("https://")
        return Finding("slack_webhook" if is_webhook else "slack_token", _mask(secret))

    def github_token(text: str) -> Finding | None:
        # The plugin's pattern captures only the "ghp" prefix, so analyze_string would
        # yield that; take the whole match from its patterns instead.
        patterns = (*github.denylist, _GITHUB_PAT)
        return _first("github_token", (m.group(0) for p in patterns for m in p.finditer(text)))

    return (
        _Detector(("PRIVATE KEY", "PuTTY-User-Key-File-"), private_key),
        _Detector(("akia", "asia", "abia", "acca", "a3t", "aws"), aws_key, casefold=True),
        _Detector(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), github_token),
        _Detector(("xox", "hooks.slack.com"), slack_token, casefold=True),
        _Detector(("k_live_",), lambda text: _first("stripe_key", stripe.analyze_string(text))),
        _Detector(("sk-ant-",), lambda text: _first("anthropic_key", _ANTHROPIC.findall(text))),
        # The plugin's pattern backtracks on long "sk-" runs: run it only when the
        # marker every OpenAI key carries ("OpenAI" in base64) is present.
        _Detector(("T3BlbkFJ",), lambda text: _first("openai_key", openai.analyze_string(text))),
        _Detector(
            ("sk-proj-", "sk-svcacct-", "sk-admin-"),
            lambda text: _first("openai_key", _OPENAI_SCOPED.findall(text)),
        ),
        _Detector(("AIza",), lambda text: _first("google_api_key", _GOOGLE.findall(text))),
        _Detector(("eyJ",), lambda text: _first("jwt", jwt.analyze_string(text))),
        _Detector(("://",), _url_credentials),
    )
