"""The TypeScript MCP SDK's OAuth client against ``zm serve`` on 127.0.0.1 (tests/js/oauth.mjs).

The script discovers the server from its 401, registers, sends the user to
``/authorize`` and exchanges the code, then calls tools with the token; it
also plays each refusal with the SDK's own building blocks. This test is the
user: whenever the script asks for an authorization it follows the URL with
alice's dashboard session, approves on the consent page, and hands back the
URL the server redirected to; when it asks for a revocation it runs
``zm user oauth revoke``. Two more servers on the same data, with 1-second
codes and 1-second access tokens, give the expiry cases.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.mcp.helpers import Deployment, start_server, stop_server, unique, zm
from tests.mcp.oauth_flow import Browser, query_of
from tests.mcp.test_js_client import JS_DIR, node  # noqa: F401  (the fixture that installs the SDK)
from zero_memory.store import open_store

pytestmark = pytest.mark.slow

NODE_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def short_lived(http_server: Deployment) -> Iterator[dict[str, str]]:
    """Two more ``zm serve`` on the same data directory: codes that last 1 s, access tokens that last 1 s."""
    started = []
    urls = {}
    try:
        for name, variable in (("code", "ZM_OAUTH_CODE_TTL_S"), ("access", "ZM_OAUTH_ACCESS_TOKEN_TTL_S")):
            process, url = start_server({**http_server.env, variable: "1"}, http_server.home / f"serve-{name}.log")
            started.append(process)
            urls[name] = url
        yield urls
    finally:
        for process in started:
            stop_server(process)


def run_oauth_client(node: str, env: dict[str, str], deployment: Deployment) -> dict[str, Any]:  # noqa: F811
    """Run the script, answering its requests as alice; its report."""
    browsers: dict[str, Browser] = {}
    asked: list[dict[str, Any]] = []
    process = subprocess.Popen(
        [node, "oauth.mjs"],
        cwd=JS_DIR,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        for line in process.stdout:
            message = json.loads(line)
            asked.append(message)
            if "report" in message:
                message["report"]["asked"] = asked
                return message["report"]  # type: ignore[no-any-return]
            if "authorize" in message:
                origin = "/".join(message["authorize"].split("/")[:3])
                if origin not in browsers:
                    browsers[origin] = Browser(origin, deployment.tokens["alice"])
                answer = browsers[origin].decide(message["authorize"])
            elif "revoke" in message:
                zm(deployment.env, "user", "oauth", "revoke", "alice", "--client", message["revoke"])
                answer = "ok"
            else:
                raise AssertionError(f"unexpected message {message}")
            process.stdin.write(answer + "\n")
            process.stdin.flush()
        raise AssertionError(f"the script ended without a report:\n{process.stderr.read() if process.stderr else ''}")
    finally:
        for browser in browsers.values():
            browser.close()
        process.kill()
        process.wait(timeout=NODE_TIMEOUT_S)


@pytest.fixture(scope="module")
def report(node: str, http_server: Deployment, short_lived: dict[str, str]) -> dict[str, Any]:  # noqa: F811
    env = {
        **http_server.env,
        "ZM_JS_URL": f"{http_server.url}/mcp",
        "ZM_JS_SHORT_CODE_URL": f"{short_lived['code']}/mcp",
        "ZM_JS_SHORT_ACCESS_URL": f"{short_lived['access']}/mcp",
        "ZM_JS_TAG": unique().strip("[]"),
    }
    return run_oauth_client(node, env, http_server)


def test_the_sdk_discovers_registers_authorizes_and_calls_tools(
    report: dict[str, Any], http_server: Deployment
) -> None:
    flow = report["flow"]
    assert flow["needed"], "the first connection must be refused and start the OAuth flow"
    authorize = query_of(flow["authorizationUrl"])
    assert flow["authorizationUrl"].startswith(f"{http_server.url}/authorize?")
    assert authorize["code_challenge_method"] == "S256" and len(authorize["code_challenge"]) == 43
    assert authorize["resource"] == f"{http_server.url}/mcp"
    assert flow["state"] == authorize["state"], "the state comes back unchanged"
    assert flow["client"]["method"] == "client_secret_post", "a confidential client, checked against its digest"
    assert flow["tokens"]["access_token"].startswith("zmat_") and flow["tokens"]["refresh_token"].startswith("zmrt_")
    assert flow["tokens"]["token_type"].lower() == "bearer" and flow["tokens"]["expires_in"] == 3600
    assert {"remember", "recall", "get_memory", "forget"} <= set(report["tools"])
    written = report["remember"]
    assert not written["isError"] and written["structured"]["scope"] == "user.alice"
    assert written["structured"]["id"] in report["recall"]
    assert report["autoRefresh"] == {"tools": len(report["tools"]), "rotated": True}


def test_the_metadata_offers_what_the_flow_uses(report: dict[str, Any], http_server: Deployment) -> None:
    metadata = report["metadata"]
    assert metadata["issuer"] == http_server.url
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["registration_endpoint"] == f"{http_server.url}/register"
    assert set(metadata["grant_types_supported"]) == {"authorization_code", "refresh_token"}


def test_a_redirect_uri_that_was_not_registered_is_refused_without_a_redirect(report: dict[str, Any]) -> None:
    refused = report["wrongRedirect"]
    assert refused["status"] == 400 and refused["location"] is None
    body = json.loads(refused["body"])
    assert body["error"] == "invalid_request" and "not registered" in body["error_description"]


def test_a_wrong_or_missing_pkce_verifier_is_refused_and_the_right_one_then_works(report: dict[str, Any]) -> None:
    assert report["wrongVerifier"]["refused"] and report["wrongVerifier"]["name"] == "InvalidGrantError"
    assert "code_verifier" in report["wrongVerifier"]["message"]
    assert report["missingVerifier"]["status"] == 400
    assert report["missingVerifier"]["body"]["error"] == "invalid_request"
    assert "code_verifier" in report["missingVerifier"]["body"]["error_description"]
    assert report["rightVerifier"] == {"ok": True, "connects": {"ok": True}}


def test_a_reused_code_is_refused_and_revokes_what_it_issued(report: dict[str, Any]) -> None:
    assert report["reusedCode"]["refused"] and report["reusedCode"]["name"] == "InvalidGrantError"
    assert "used already" in report["reusedCode"]["message"]
    assert report["afterReuse"]["ok"] is False and report["afterReuse"]["code"] == 401


def test_a_refresh_token_works_once_and_its_replay_revokes_the_grant(report: dict[str, Any]) -> None:
    assert report["refreshOnce"] == {"rotated": True, "connects": {"ok": True}}
    assert report["refreshTwice"]["refused"] and report["refreshTwice"]["name"] == "InvalidGrantError"
    after = report["afterRefreshReplay"]
    assert after["newest"]["refused"] and "revoked" in after["newest"]["message"]
    assert after["access"]["ok"] is False and after["access"]["code"] == 401


def test_a_revoked_grant_refuses_its_access_and_refresh_tokens(report: dict[str, Any]) -> None:
    revoked = report["revoked"]
    assert revoked["before"] == {"ok": True}
    assert revoked["access"]["ok"] is False and revoked["access"]["code"] == 401
    assert revoked["refresh"]["refused"] and revoked["refresh"]["name"] == "InvalidGrantError"


def test_an_expired_code_is_refused(report: dict[str, Any]) -> None:
    assert report["expiredCode"]["refused"] and report["expiredCode"]["name"] == "InvalidGrantError"
    assert "expired" in report["expiredCode"]["message"]


def test_an_expired_access_token_is_refused_while_its_refresh_token_renews_it(report: dict[str, Any]) -> None:
    expired = report["expiredAccess"]
    assert expired["expiresIn"] == 1
    assert expired["access"]["ok"] is False and expired["access"]["code"] == 401
    assert expired["refresh"] == {"refused": False}


def test_every_grant_and_issue_is_audited_without_a_token(report: dict[str, Any], http_server: Deployment) -> None:
    store = open_store(f"sqlite:///{http_server.database}")
    try:
        with store.tx() as tx:
            rows = [
                entry
                for action in ("oauth.grant", "oauth.token.issue", "oauth.revoke", "oauth.client.register")
                for entry in tx.audit_actions(action)
            ]
    finally:
        store.close()
    actions = {entry.action for entry in rows}
    assert actions == {"oauth.grant", "oauth.token.issue", "oauth.revoke", "oauth.client.register"}
    reasons = {entry.payload.get("reason") for entry in rows if entry.action == "oauth.revoke"}
    assert {"code_replayed", "refresh_token_replayed", "revoked_by_operator"} <= reasons
    tokens = report["flow"]["tokens"]
    text = json.dumps([entry.payload for entry in rows])
    for secret in (tokens["access_token"], tokens["refresh_token"], tokens["access_token"].split("_", 2)[2]):
        assert secret not in text
