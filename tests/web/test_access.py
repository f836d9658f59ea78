"""Who gets in and what they may post: tokens, one-time links, the session cookie, CSRF, isolation."""

from __future__ import annotations

import base64
import itertools
import json

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from tests.web.conftest import log_in, token_for
from tests.web.helpers import Seeder, csrf_of, unique
from zero_memory.app import App
from zero_memory.web import auth, dashboard


def post_routes(app: App) -> list[str]:
    """Every POST path of the dashboard, with its parameters filled in."""
    mount = dashboard.routes(app)[0]
    assert isinstance(mount, Mount)
    paths = []
    for route in mount.routes:
        if isinstance(route, Route) and route.methods and "POST" in route.methods:
            paths.append(
                route.path.format(
                    dispute_id="dsp_x", candidate_id="prt_x", memory_id="mem_x", run_id="run_x", grant_id="grant_x"
                )
            )
    return paths


def test_pages_send_a_visitor_to_the_login_page_and_back(web: TestClient, app: App) -> None:
    answer = web.get("/memories?q=port")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/login?next=/memories%3Fq%3Dport"
    page = web.get(answer.headers["location"])
    done = web.post(
        "/login", data={"token": token_for(app, "alice"), "csrf_token": csrf_of(page.text), "next": "/memories?q=port"}
    )
    assert done.headers["location"] == "/memories?q=port"


def test_a_token_logs_in_and_a_wrong_one_is_refused_without_detail(web: TestClient, app: App) -> None:
    page = web.get("/login")
    wrong = web.post("/login", data={"token": "zm_nope_nope", "csrf_token": csrf_of(page.text)})
    assert wrong.status_code == 401 and "not valid" in wrong.text
    assert web.get("/queue").status_code == 303
    log_in(web, app, "alice")
    assert web.get("/queue").status_code == 200


def test_the_session_cookie_is_signed_httponly_and_lax_and_secure_over_https(app: App) -> None:
    for base, secure in (("http://testserver", False), ("https://testserver", True)):
        with TestClient(Starlette(routes=dashboard.routes(app)), base_url=base, follow_redirects=False) as client:
            page = client.get("/login")
            done = client.post("/login", data={"token": token_for(app, "alice"), "csrf_token": csrf_of(page.text)})
            cookie = done.headers["set-cookie"].lower()
            assert cookie.startswith(f"{auth.SESSION_COOKIE}=")
            assert "httponly" in cookie and "samesite=lax" in cookie
            assert ("secure" in cookie.split("; ")) is secure


def test_a_forged_session_cookie_is_no_session(alice_web: TestClient) -> None:
    """The cookie is readable but signed: rewriting its user to bob voids it."""
    _, timestamp, signature = alice_web.cookies[auth.SESSION_COOKIE].split(".")
    forged = base64.b64encode(json.dumps({"uid": "bob", "csrf": "x"}).encode()).decode()
    alice_web.cookies.clear()
    alice_web.cookies.set(auth.SESSION_COOKIE, f"{forged}.{timestamp}.{signature}")
    assert alice_web.get("/queue").status_code == 303


def test_every_form_post_without_its_csrf_token_is_refused(alice_web: TestClient, app: App) -> None:
    paths = post_routes(app)
    assert len(paths) == 16, paths
    good = csrf_of(alice_web.get("/queue").text)
    for path, token in itertools.product(paths, (None, "", "forged", good[:-1])):
        data = {} if token is None else {"csrf_token": token}
        answer = alice_web.post(path, data=data)
        assert answer.status_code == 403, (path, token, answer.status_code)
        assert "security token" in answer.text


def test_a_visitor_without_a_session_cannot_post_either(web: TestClient, app: App) -> None:
    for path in post_routes(app):
        assert web.post(path, data={"csrf_token": "guess"}).status_code == 403


def test_logging_in_starts_a_new_session_and_logging_out_ends_it(web: TestClient, app: App) -> None:
    before = csrf_of(web.get("/login").text)
    log_in(web, app, "alice")
    after = csrf_of(web.get("/queue").text)
    assert after != before
    out = web.post("/logout", data={"csrf_token": after})
    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert web.get("/queue").status_code == 303


def test_login_never_redirects_off_site(web: TestClient, app: App) -> None:
    for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"):
        page = web.get("/login")
        done = web.post(
            "/login", data={"token": token_for(app, "alice"), "csrf_token": csrf_of(page.text), "next": target}
        )
        assert done.headers["location"] == "/queue", target
        web.post("/logout", data={"csrf_token": csrf_of(web.get("/queue").text)})


def test_a_one_time_link_logs_the_local_user_in_once(web: TestClient, app: App) -> None:
    line = auth.login_link(app, "http://127.0.0.1:8787")
    assert line.startswith("dashboard: http://127.0.0.1:8787/login/") and "alice" in line
    path = line.split()[1].removeprefix("http://127.0.0.1:8787")
    first = web.get(path)
    assert first.status_code == 303 and first.headers["location"] == "/queue"
    assert web.get("/queue").status_code == 200
    web.cookies.clear()
    again = web.get(path)
    assert again.status_code == 401 and "used already or has expired" in again.text
    assert web.get("/queue").status_code == 303


def test_a_one_time_link_can_lead_on_to_a_page_of_this_site_only(web: TestClient, app: App) -> None:
    """``/login/CODE?next=/oauth/consent?...`` signs in and returns to the consent step; other targets go home."""
    for target, landing in (
        ("/clients", "/clients"),
        ("//evil.example/x", "/queue"),
        ("https://evil.example", "/queue"),
    ):
        web.cookies.clear()
        line = auth.login_link(app, "http://127.0.0.1:8787")
        path = line.split()[1].removeprefix("http://127.0.0.1:8787")
        done = web.get(path, params={"next": target})
        assert done.status_code == 303 and done.headers["location"] == landing, target


def test_login_codes_expire_and_belong_to_one_data_directory() -> None:
    now = [1000.0]
    codes = auth.LoginCodes(ttl_s=60, clock=lambda: now[0])
    late = codes.issue("realm", "alice")
    foreign = codes.issue("realm", "alice")
    fresh = codes.issue("realm", "alice")
    assert codes.redeem("other-realm", foreign) is None
    assert codes.redeem("realm", foreign) is None, "a refused code is spent"
    assert codes.redeem("realm", fresh) == "alice"
    assert codes.redeem("realm", fresh) is None
    now[0] += 61
    assert codes.redeem("realm", late) is None


def test_revoking_the_token_a_session_came_from_ends_it(alice_web: TestClient, app: App) -> None:
    with app.store.tx(write=True) as tx:
        tx.revoke_tokens("alice", app.clock())
    assert alice_web.get("/queue").status_code == 303
    assert alice_web.get("/queue").status_code == 303, "the session is gone, not just refused once"


def test_another_users_memory_dispute_and_run_answer_404_like_missing_ones(alice_web: TestClient, app: App) -> None:
    seed = Seeder(app)
    theirs = seed.memory("bob", unique("bob's private note about the VPN"))
    dispute, _, _ = seed.pair("bob", unique("bob's port is 1"), unique("bob's port is 2"))
    for path in (f"/memories/{theirs}", f"/queue/{dispute}", "/memories/mem_missing", "/queue/dsp_missing"):
        answer = alice_web.get(path)
        assert answer.status_code == 404, path
        assert "bob" not in answer.text.split("<main", 1)[1].replace(f"{theirs}", "").replace(dispute, "")
    csrf = csrf_of(alice_web.get("/queue").text)
    assert alice_web.post(f"/memories/{theirs}/forget", data={"csrf_token": csrf}).status_code == 404
    assert alice_web.post(f"/queue/{dispute}/resolve", data={"csrf_token": csrf, "keep_both": "1"}).status_code == 404
    assert seed.get(theirs).live and seed.dispute(dispute).pending


@pytest.mark.parametrize("path", ["/queue", "/memories", "/portability", "/runs", "/insights"])
def test_pages_carry_the_security_headers(alice_web: TestClient, path: str) -> None:
    headers = alice_web.get(path).headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-store"
