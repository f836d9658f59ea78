"""Secrets at rest: owners' provider keys, encrypted with ``ZM_SECRET_KEY``.

Fernet (AES-128-CBC with HMAC-SHA256, from ``cryptography``) under a key
derived from ``ZM_SECRET_KEY`` with HKDF-SHA256, so any string of enough
entropy works as the secret and the same secret can serve other purposes
(signing sessions) without the derived keys being related. A token that does
not decrypt — tampered with, or written under another ``ZM_SECRET_KEY`` —
raises a ``ZMError`` that says what to do and echoes nothing secret.
"""

from __future__ import annotations

import base64
import secrets

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from zero_memory import errors

MIN_SECRET_KEY_CHARS = 16
_PURPOSE = b"zero-memory/provider-keys/v1"


def generate_secret_key() -> str:
    """A new random ``ZM_SECRET_KEY``: 256 bits, URL-safe text."""
    return secrets.token_urlsafe(32)


def encrypt(secret_key: str | None, plaintext: str) -> str:
    """``plaintext`` encrypted and authenticated under ``secret_key``, as ASCII text."""
    if not plaintext:
        raise errors.validation("nothing to encrypt: the key is empty")
    return _fernet(secret_key).encrypt(plaintext.encode("utf-8")).decode("ascii")


def decrypt(secret_key: str | None, token: str) -> str:
    """The plaintext of ``token``; ``unavailable`` if ``secret_key`` is not the one it was written with."""
    try:
        return _fernet(secret_key).decrypt(token.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError):
        raise errors.unavailable(
            "a stored provider key cannot be decrypted: ZM_SECRET_KEY changed since it was stored, "
            "or the stored value was altered; store the key again with `zm user key set`"
        ) from None


def _fernet(secret_key: str | None) -> Fernet:
    if not secret_key:
        raise errors.unavailable("ZM_SECRET_KEY is not set: stored provider keys cannot be used")
    if len(secret_key) < MIN_SECRET_KEY_CHARS:
        raise errors.validation(
            f"ZM_SECRET_KEY is too short: use at least {MIN_SECRET_KEY_CHARS} random characters "
            "(one is generated into ZM_HOME when the variable is unset)"
        )
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_PURPOSE).derive(secret_key.encode("utf-8"))
    return Fernet(base64.urlsafe_b64encode(derived))
