"""The content guard refuses known credential formats and never echoes them.

Every fake credential is assembled at run time so this file does not itself
look like a leaked key to secret scanners.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from zero_memory import errors
from zero_memory.memory.guard import Finding, check_fields, find_secret

UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
ALNUM = "abcdefghijklmnopqrstuvwxyz" + UPPER_DIGITS
TOKEN = ALNUM + "_-"
BASE64 = ALNUM + "+/"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt_of(header: Mapping[str, object], payload: Mapping[str, object], signature: bytes) -> str:
    parts = (json.dumps(header).encode(), json.dumps(payload).encode(), signature)
    return ".".join(b64url(part) for part in parts)


def pem(kind: str, body: str) -> str:
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {kind}-----", *lines, f"-----END {kind}-----"])


FAKE_PEM_BODY = "MIIEowIBAAKCAQEA" + "x7Kq" * 60
FAKE_JWT = jwt_of({"alg": "HS256", "typ": "JWT"}, {"sub": "1234567890", "name": "Ada"}, b"\x8f" * 32)

DETECTED = [
    pytest.param("aws_access_key", "deploy with AK" + "IA" + "Z3XQ7RTV2MNB4LPY", id="aws-key-id"),
    pytest.param(
        "aws_secret_key",
        'aws_secret_access_key = "' + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "Zq8Lm3Np1X" + '"',
        id="aws-secret-key",
    ),
    pytest.param("github_token", "token gh" + "p_" + "R8c2Lw0QeX5vT1yNk9Ub3Hs7Ga4Jd6Mf0PzVqWx", id="github"),
    pytest.param(
        "github_token",
        "GH_TOKEN=github" + "_pat_" + "11ABCDEFG0" + "aB3dE5gH7jK9mN" + "_" + "q2R4t6V8x0Z" * 5 + "abcd",
        id="github-fine-grained",
    ),
    pytest.param("slack_token", "bot token xo" + "xb-" + "123456789012-1234567890123-" + "aBcD3fGh1jKl", id="slack"),
    pytest.param(
        "slack_webhook",
        "post to https://hooks.slack" + ".com/services/" + "T0ABCDEF1/B0ABCDEF2/" + "q9W8e7R6t5Y4u3I2o1P0",
        id="slack-webhook",
    ),
    pytest.param("stripe_key", "STRIPE_KEY=sk" + "_live_" + "51HxQ2eZvKYlo2C8" + "aB3dE5gH", id="stripe"),
    pytest.param("stripe_key", "restricted rk" + "_live_" + "51HxQ2eZvKYlo2C8" + "aB3dE5gH", id="stripe-restricted"),
    pytest.param(
        "openai_key",
        "sk-" + "aB3dE5gH7jK9mN1pQ2rS" + "T3Blbk" + "FJ" + "tU4vW6xY8zA0bC2dE4fG",
        id="openai-legacy",
    ),
    pytest.param("openai_key", "OPENAI_API_KEY=sk-" + "proj-" + "Zx9_Qw-8Er7Ty6" * 6, id="openai-project"),
    pytest.param("anthropic_key", "key sk-" + "ant-" + "api03-" + "Zx9_Qw-8Er7Ty6Ui" * 6 + "AA", id="anthropic"),
    pytest.param("google_api_key", "?key=AI" + "za" + "SyB1c2D3e4F5g6H7i8J9k0L-m_N1o2P3q4r", id="google"),
    pytest.param("jwt", "Authorization: Bearer " + FAKE_JWT, id="jwt"),
    pytest.param("private_key", "the deploy key:\n" + pem("RSA PRIVATE KEY", FAKE_PEM_BODY), id="pem-rsa"),
    pytest.param("private_key", pem("OPENSSH PRIVATE KEY", FAKE_PEM_BODY), id="pem-openssh"),
    pytest.param("private_key", pem("ENCRYPTED PRIVATE KEY", FAKE_PEM_BODY), id="pem-pkcs8-encrypted"),
    pytest.param(
        "private_key",
        'SIGNING_KEY="-----BEGIN PRIVATE KEY-----\\n' + FAKE_PEM_BODY + '\\n-----END PRIVATE KEY-----"',
        id="pem-escaped-newlines",
    ),
    pytest.param("url_credentials", "DATABASE_URL=postgres://app:" + "Tr0ub4dor" + "@db:5432/app", id="url"),
    pytest.param("url_credentials", "redis://:" + "hunter2x" + "@cache:6379/0", id="url-no-user"),
    pytest.param(
        "url_credentials",
        "git clone https://bot:" + "p4ss!w0rd" + "@git.example.com/r.git",
        id="url-subdelim",
    ),
]

CLEAN = [
    pytest.param("fixed in 3f786850e387550fdab836ed7e6dc881de23001b, see abc1234", id="git-sha"),
    pytest.param('aws key rotation landed in "3f786850e387550fdab836ed7e6dc881de23001b"', id="git-sha-near-aws"),
    pytest.param("request id 550e8400-e29b-41d4-a716-446655440000 failed", id="uuid"),
    pytest.param("connect to postgres://localhost:5432/db", id="url-port-no-password"),
    pytest.param("clone https://user@host/org/repo.git or ssh://git@github.com:22/org/repo", id="url-user-only"),
    pytest.param("git@github.com:org/repo.git and alice@example.com", id="scp-and-email"),
    pytest.param("http://[::1]:8080/health and http://host:8080/p?next=a@b", id="url-port-path"),
    pytest.param("format: postgres://user:password@host:5432/db", id="url-placeholder-word"),
    pytest.param("postgres://app:${PGPASSWORD}@db/app or redis://:<password>@cache", id="url-placeholder-var"),
    pytest.param("mysql://root:****@localhost and amqp://guest:xxxx@rabbit", id="url-placeholder-stars"),
    pytest.param("a risk-free change; the task-proj-alpha-migration-for-the-billing-service-v2", id="sk-in-prose"),
    pytest.param("Slack bot tokens start with xoxb- and Stripe live keys with sk_live_", id="prefixes-in-prose"),
    pytest.param("Google keys start with AIza; JWT headers start with eyJhbGciOiJIUzI1NiJ9.", id="more-prefixes"),
    pytest.param("the blob is " + base64.b64encode(bytes(range(256)) * 4).decode() + " in base64", id="base64"),
    pytest.param(
        "deploy keys must be -----BEGIN OPENSSH PRIVATE KEY----- format; convert with ssh-keygen -p -m PEM",
        id="pem-header-in-prose",
    ),
    pytest.param("Пароль хранится в Vault 🔐, 密码在保险库里 ✅ \u200fשלום\u200e \u202eevil\u202c", id="unicode"),
    pytest.param("👩‍💻" * 500 + "\u0000\ufeff", id="emoji-and-odd-codepoints"),
    pytest.param("", id="empty"),
]


@pytest.mark.parametrize(("detector", "text"), DETECTED)
def test_each_credential_format_is_refused_by_its_detector(detector: str, text: str) -> None:
    with pytest.raises(errors.ZMError) as caught:
        check_fields({"content": text})

    assert caught.value.code is errors.Code.VALIDATION_FAILED
    assert caught.value.subcode == errors.SECRET_CONTENT_REJECTED
    assert str(caught.value).startswith(f"validation_failed: secret_content_rejected: content {detector} ")


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_engineering_text_passes(text: str) -> None:
    assert find_secret(text) is None
    check_fields({"content": text})


def test_the_sample_shows_four_characters_and_the_length() -> None:
    key_id = "AK" + "IA" + "Z3XQ7RTV2MNB4LPY"

    assert find_secret(f"id {key_id}.") == Finding("aws_access_key", "AKIA…(20 chars)")


def test_a_private_key_is_named_by_its_header_type_only() -> None:
    finding = find_secret(pem("EC PRIVATE KEY", FAKE_PEM_BODY))

    assert finding == Finding("private_key", "EC PRIVATE KEY")


def test_a_url_password_shows_no_characters_at_all() -> None:
    """Passwords are short; four characters of one would give too much away."""
    finding = find_secret("postgres://app:" + "s3cretpw" + "@db/app")

    assert finding == Finding("url_credentials", "…(8 chars)")


@pytest.mark.parametrize("field", ["content", "source.thread", "links.0.note"])
def test_the_error_names_the_offending_field(field: str) -> None:
    fields = {"kind": "fact", field: "token gh" + "p_" + "R8c2Lw0QeX5vT1yNk9Ub3Hs7Ga4Jd6Mf0PzVqWx"}

    with pytest.raises(errors.ZMError, match=rf"secret_content_rejected: {field} github_token "):
        check_fields(fields)


def test_the_first_offending_field_in_order_is_reported() -> None:
    github = "gh" + "p_" + "R8c2Lw0QeX5vT1yNk9Ub3Hs7Ga4Jd6Mf0PzVqWx"
    stripe = "sk" + "_live_" + "51HxQ2eZvKYlo2C8aB3dE5gH"

    with pytest.raises(errors.ZMError, match=r": source\.thread github_token "):
        check_fields({"content": "fine", "source.thread": github, "reason": stripe})


def test_missing_and_empty_fields_pass() -> None:
    check_fields({"content": "a plain fact", "source.thread": None, "reason": ""})


def test_importing_the_guard_builds_nothing() -> None:
    """detect-secrets costs ~100 ms to import; it loads on the first check, not at import."""
    code = "import sys, zero_memory.memory.guard; assert 'detect_secrets' not in sys.modules"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_a_full_length_text_is_checked_in_milliseconds() -> None:
    # Mentions every detector's prefilter hint, so every detector really runs.
    paragraph = (
        "Rotate the AWS key via https://console.aws.amazon.com/iam and postgres://localhost:5432/db; "
        "xoxb- tokens, sk_live_ keys, sk-proj- keys, sk-ant- keys, AIza keys, T3BlbkFJ markers, eyJ "
        "headers and PRIVATE KEY blocks all stay out of memory. Commit 3f786850e387550fdab836ed7e6dc8. "
    )
    text = (paragraph * (16_000 // len(paragraph) + 1))[:16_000]
    find_secret(text)  # builds the detectors

    best = min(_seconds(lambda: find_secret(text)) for _ in range(5))

    assert find_secret(text) is None
    assert best < 0.02


def _seconds(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


# --- the masked sample never leaks the secret -------------------------------------------

# Each strategy draws (text to embed, the part of it that is secret). Fixed public
# prefixes such as "github_pat_" are format markers, not secret.


def _chars(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=size)


@st.composite
def _aws_key_id(draw: st.DrawFn) -> tuple[str, str]:
    key = draw(st.sampled_from(["AKIA", "ASIA", "ABIA", "ACCA"])) + draw(_chars(UPPER_DIGITS, 16))
    return key, key


@st.composite
def _aws_secret_key(draw: st.DrawFn) -> tuple[str, str]:
    secret = draw(_chars(ALNUM + "/+", 40))
    assume(not all(c in "0123456789abcdef" for c in secret))
    return f'aws_secret_access_key = "{secret}"', secret


@st.composite
def _github_token(draw: st.DrawFn) -> tuple[str, str]:
    token = "gh" + draw(st.sampled_from("pousr")) + "_" + draw(_chars(ALNUM + "_", 36))
    return token, token


@st.composite
def _github_pat(draw: st.DrawFn) -> tuple[str, str]:
    secret = draw(_chars(ALNUM + "_", 82))
    return "github" + "_pat_" + secret, secret


@st.composite
def _slack_token(draw: st.DrawFn) -> tuple[str, str]:
    numbers = draw(st.lists(st.text("0123456789", min_size=1, max_size=13), min_size=1, max_size=3))
    tail = draw(st.text(ALNUM, min_size=6, max_size=40))
    token = "xox" + draw(st.sampled_from("abposr")) + "-" + "".join(n + "-" for n in numbers) + tail
    return token, token


@st.composite
def _stripe_key(draw: st.DrawFn) -> tuple[str, str]:
    key = draw(st.sampled_from(["sk", "rk"])) + "_live_" + draw(_chars(ALNUM, 24))
    return key, key


@st.composite
def _openai_key(draw: st.DrawFn) -> tuple[str, str]:
    legacy = "sk-" + draw(_chars(ALNUM, 20)) + "T3Blbk" + "FJ" + draw(_chars(ALNUM, 20))
    project = "sk-" + draw(st.sampled_from(["proj", "svcacct", "admin"])) + "-" + draw(_chars(TOKEN, 60))
    key = draw(st.sampled_from([legacy, project]))
    return key, key


@st.composite
def _anthropic_key(draw: st.DrawFn) -> tuple[str, str]:
    key = "sk-" + "ant-" + draw(st.sampled_from(["api03", "admin01"])) + "-" + draw(_chars(TOKEN, 93)) + "AA"
    return key, key


@st.composite
def _google_api_key(draw: st.DrawFn) -> tuple[str, str]:
    key = "AI" + "za" + draw(_chars(TOKEN, 35))
    return key, key


_JSON_OBJECTS = st.dictionaries(st.text(ALNUM, min_size=1, max_size=8), st.text(max_size=20) | st.integers())


@st.composite
def _jwt(draw: st.DrawFn) -> tuple[str, str]:
    header = {"alg": "HS256", **draw(_JSON_OBJECTS)}
    token = jwt_of(header, draw(_JSON_OBJECTS), draw(st.binary(min_size=16, max_size=64)))
    return token, token


@st.composite
def _private_key(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(["RSA", "EC", "DSA", "OPENSSH", "ENCRYPTED"])) + " PRIVATE KEY"
    body = draw(st.text(BASE64, min_size=64, max_size=400))
    return pem(kind, body), body


@st.composite
def _url_credentials(draw: st.DrawFn) -> tuple[str, str]:
    scheme = draw(st.sampled_from(["postgres", "postgresql", "mysql", "redis", "amqp", "https", "mongodb+srv"]))
    user = draw(st.text(ALNUM + "._-", max_size=12))
    # Starts with a letter or digit and ends with a digit, so it is never a placeholder.
    first, last = draw(_chars(ALNUM, 1)), draw(_chars("0123456789", 1))
    password = first + draw(st.text(ALNUM + "!$&*+,;=~._-", min_size=4, max_size=30)) + last
    return f"{scheme}://{user}:{password}@db.example.com:5432/app", password


FORMATS = {
    "aws_access_key": _aws_key_id(),
    "aws_secret_key": _aws_secret_key(),
    "github_token": _github_token() | _github_pat(),
    "slack_token": _slack_token(),
    "stripe_key": _stripe_key(),
    "openai_key": _openai_key(),
    "anthropic_key": _anthropic_key(),
    "google_api_key": _google_api_key(),
    "jwt": _jwt(),
    "private_key": _private_key(),
    "url_credentials": _url_credentials(),
}


@pytest.mark.parametrize("detector", FORMATS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), before=st.text(max_size=200), after=st.text(max_size=200))
def test_the_error_never_contains_the_secret(detector: str, data: st.DataObject, before: str, after: str) -> None:
    embedded, secret = data.draw(FORMATS[detector])
    separators = st.sampled_from([" ", "\n", "\t", " (", ": "])
    text = before + data.draw(separators) + embedded + data.draw(separators) + after

    with pytest.raises(errors.ZMError) as caught:
        check_fields({"content": text})

    # Everything before the sample is fixed text, which a drawn secret may well contain
    # ("url_cr..."); the sample is the only part that is derived from the input.
    fixed = f"validation_failed: secret_content_rejected: content {detector} "
    message = str(caught.value)
    assert message.startswith(fixed)
    sample = message.removeprefix(fixed)
    leaked = [secret[i : i + 6] for i in range(len(secret) - 5) if secret[i : i + 6] in sample]
    assert not leaked, message
