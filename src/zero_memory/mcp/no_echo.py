"""An error answer that does not repeat what the request sent."""

from __future__ import annotations

import json
from contextlib import suppress
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class NoEcho:
    """Keeps what a request sent out of the error descriptions answered to it.

    The SDK's handlers quote some input back (``Client ID '…' not found``, a
    pydantic message naming an unexpected ``grant_type``); a secret pasted
    into the wrong field would come back in the answer, or in the redirect
    that carries an ``/authorize`` error. Every parameter value of eight
    characters or more is cut from ``error_description``, wherever it is.
    """

    MIN_ECHO_CHARS = 8

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = bytearray()

        async def recording() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
            return message

        held: list[Message] = []

        async def quiet(message: Message) -> None:
            if message["type"] == "http.response.start":
                held.append(message)
                return
            if message["type"] == "http.response.body" and held:
                start = held.pop()
                sent = self._values(scope.get("query_string", b""), bytes(body))
                start, payload = _without(start, message.get("body", b""), sent)
                await send(start)
                await send({**message, "body": payload})
                return
            await send(message)

        await self.app(scope, recording, quiet)

    def _values(self, query: bytes, body: bytes) -> list[str]:
        values = [value for _, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True)]
        text = body.decode("utf-8", "replace")
        values.extend(value for _, value in parse_qsl(text, keep_blank_values=True))
        with suppress(ValueError):
            parsed = json.loads(text) if text.lstrip().startswith("{") else {}
            values.extend(_strings(parsed))
        return sorted({v for v in values if len(v) >= self.MIN_ECHO_CHARS}, key=len, reverse=True)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _scrub(text: str, sent: list[str]) -> str:
    for value in sent:
        text = text.replace(value, "…")
    return text


def _without(start: Message, payload: bytes, sent: list[str]) -> tuple[Message, bytes]:
    """The response with ``sent`` cut from its error description (JSON body, or a redirect's query)."""
    headers = list(start.get("headers", []))
    for index, (name, value) in enumerate(headers):
        if name.lower() == b"location" and b"error_description" in value:
            parts = urlsplit(value.decode("latin-1"))
            query = [(k, _scrub(v, sent) if k == "error_description" else v) for k, v in parse_qsl(parts.query)]
            headers[index] = (name, urlunsplit(parts._replace(query=urlencode(query))).encode("latin-1"))
    if start.get("status", 200) >= 400 and b"error_description" in payload:
        with suppress(ValueError):
            answer = json.loads(payload)
            if isinstance(answer, dict) and isinstance(answer.get("error_description"), str):
                answer["error_description"] = _scrub(answer["error_description"], sent)
                payload = json.dumps(answer).encode()
                headers = [(n, str(len(payload)).encode() if n.lower() == b"content-length" else v) for n, v in headers]
    return {**start, "headers": headers}, payload
