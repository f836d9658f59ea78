"""``zm verify --server``: the project's anchors read from, and the outcomes reported to, a ``zm serve``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from zero_memory import errors
from zero_memory.domain.anchors import AnchorRecord
from zero_memory.memory import verification
from zero_memory.memory.verification import Report, VerifyResult

TIMEOUT = httpx.Timeout(60.0, connect=10.0)


class RemoteVerifier:
    def __init__(self, server: str, token: str) -> None:
        self.base = server.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"}

    def anchors(self, hint: str) -> tuple[str, list[AnchorRecord]]:
        answer = self._call("GET", "/api/anchors", params={"project": hint})
        return str(answer["project"]), [verification.record_from_json(a) for a in answer["anchors"]]

    def report(self, project: str, reports: Sequence[Report], *, target: str, repository: str) -> VerifyResult:
        body = {
            "project": project,
            "target": target,
            "repository": repository,
            "reports": [
                {"anchor": verification.record_json(r.record), "outcome": verification.outcome_json(r.outcome)}
                for r in reports
            ],
        }
        return VerifyResult.model_validate(self._call("POST", "/api/anchors/verify", json=body))

    def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = httpx.request(method, self.base + path, headers=self.headers, timeout=TIMEOUT, **kwargs)
        except httpx.HTTPError as error:
            raise errors.unavailable(f"{self.base}: {type(error).__name__}") from error
        if response.status_code == 401:
            raise errors.validation("--token: the server refused it")
        try:
            answer = response.json()
        except ValueError as error:
            raise errors.unavailable(f"{self.base}{path} answered {response.status_code}, not JSON") from error
        if response.status_code != 200:
            code, _, detail = str(answer.get("error", "")).partition(": ")
            known = code if code in set(errors.Code) else errors.Code.UNAVAILABLE
            raise errors.ZMError(errors.Code(known), detail or f"{path} answered {response.status_code}")
        return dict(answer)
