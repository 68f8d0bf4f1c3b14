"""The loopback-double kit: routing, recording, faults, OpenAPI validation."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx
import pytest

from hermes_core.testing.loopback import LoopbackServer, error_reply, reply

DOC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "notes", "version": "1"},
    "servers": [{"url": "https://api.notes.test/v2"}],
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Note": {
                "type": "object",
                "required": ["id", "text"],
                "properties": {"id": {"type": "string"}, "text": {"type": "string"}},
                "additionalProperties": False,
            }
        },
    },
    "security": [{"bearer": []}],
    "paths": {
        "/notes": {
            "post": {
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["text"],
                                "properties": {"text": {"type": "string", "minLength": 1}},
                            }
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Note"}}
                        },
                    }
                },
            }
        },
        "/notes/{note_id}": {
            "get": {
                "parameters": [
                    {
                        "name": "note_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    },
                    {"name": "full", "in": "query", "schema": {"type": "boolean"}},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Note"}}
                        },
                    }
                },
            }
        },
    },
}

AUTH = {"Authorization": "Bearer k"}


def notes_double(bad_response: bool = False) -> LoopbackServer:
    server = LoopbackServer(openapi=DOC, name="notes")

    def create(req: Any) -> Any:
        if bad_response:
            return {"id": 1, "text": req.json["text"]}  # id must be a string
        return {"id": "n1", "text": req.json["text"]}

    server.route("POST", "/v2/notes", create)
    server.route(
        "GET", "/v2/notes/{note_id}", lambda r: {"id": r.path_params["note_id"], "text": "x"}
    )
    return server


def test_valid_requests_pass_and_are_recorded() -> None:
    with notes_double() as server:
        r = httpx.post(server.base_url + "/v2/notes", json={"text": "茶"}, headers=AUTH)
        assert r.status_code == 200 and r.json() == {"id": "n1", "text": "茶"}
        r = httpx.get(server.base_url + "/v2/notes/a%20b", params={"full": "true"}, headers=AUTH)
        assert r.json()["id"] == "a b"
        server.assert_no_violations()
        first, second = server.requests
        assert first.json == {"text": "茶"} and first.route == "/v2/notes"
        assert second.arg("full") == "true" and second.path_params == {"note_id": "a b"}
        assert len(server.requests_to("GET", "/v2/notes/{note_id}")) == 1


def test_request_violation_answers_400_and_is_recorded() -> None:
    with notes_double() as server:
        r = httpx.post(server.base_url + "/v2/notes", json={"txt": "no"}, headers=AUTH)
        assert r.status_code == 400
        assert "OpenAPI" in r.json()["detail"]
        (violation,) = server.violations
        assert violation.kind == "request" and "text" in violation.message
        with pytest.raises(AssertionError, match="OpenAPI violations"):
            server.assert_no_violations()


def test_missing_auth_is_a_violation() -> None:
    with notes_double() as server:
        r = httpx.get(server.base_url + "/v2/notes/x")
        assert r.status_code == 400
        assert server.violations


def test_bad_query_type_is_a_violation() -> None:
    with notes_double() as server:
        httpx.get(server.base_url + "/v2/notes/x", params={"full": "maybe"}, headers=AUTH)
        assert server.violations


def test_response_violation_is_recorded() -> None:
    with notes_double(bad_response=True) as server:
        r = httpx.post(server.base_url + "/v2/notes", json={"text": "a"}, headers=AUTH)
        assert r.status_code == 200
        (violation,) = server.violations
        assert violation.kind == "response"


def test_unknown_route_is_404() -> None:
    with LoopbackServer() as server:
        assert httpx.get(server.base_url + "/nothing").status_code == 404
        assert server.requests[0].route is None


def test_faults_status_times_route_and_retry_after() -> None:
    with LoopbackServer() as server:
        server.route("GET", "/a", lambda r: {"ok": True})
        server.route("GET", "/b", lambda r: reply({"ok": "b"}))
        server.fault(status=503, route="/a", times=1, retry_after=2)
        first = httpx.get(server.base_url + "/a")
        assert first.status_code == 503 and first.headers["retry-after"] == "2"
        assert httpx.get(server.base_url + "/a").json() == {"ok": True}
        server.fault(status=418)
        assert httpx.get(server.base_url + "/b").status_code == 418
        server.clear_faults()
        assert httpx.get(server.base_url + "/b").status_code == 200


def test_malformed_fault_sends_broken_json() -> None:
    with LoopbackServer() as server:
        server.route("GET", "/a", lambda r: {"ok": True})
        server.fault(malformed=True)
        r = httpx.get(server.base_url + "/a")
        assert r.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            json.loads(r.content)


def test_drop_and_hang_faults() -> None:
    with LoopbackServer() as server:
        server.route("GET", "/a", lambda r: {"ok": True})
        server.fault(drop=True, times=1)
        with pytest.raises(httpx.TransportError):
            httpx.get(server.base_url + "/a")
        server.fault(hang=30, times=1)
        with pytest.raises(httpx.ReadTimeout):
            httpx.get(server.base_url + "/a", timeout=0.3)
        assert httpx.get(server.base_url + "/a").json() == {"ok": True}


def test_delay_fault_answers_normally_afterwards() -> None:
    with LoopbackServer() as server:
        server.route("GET", "/a", lambda r: {"ok": True})
        server.fault(delay=0.2, times=1)
        started = time.monotonic()
        assert httpx.get(server.base_url + "/a").json() == {"ok": True}
        assert time.monotonic() - started >= 0.2


def test_handler_exception_becomes_500() -> None:
    with LoopbackServer() as server:
        server.route("GET", "/a", lambda r: 1 / 0)
        r = httpx.get(server.base_url + "/a")
        assert r.status_code == 500 and "ZeroDivisionError" in r.json()["detail"]


def test_error_reply_and_stop_releases_port() -> None:
    server = LoopbackServer()
    server.route("GET", "/a", lambda r: error_reply(409, "conflict"))
    with server:
        port = server.port
        assert httpx.get(server.base_url + "/a").status_code == 409
    with socket.socket() as s, pytest.raises(OSError):
        s.settimeout(1)
        s.connect(("127.0.0.1", port))


def test_openapi_from_yaml_file(tmp_path: Any) -> None:
    import yaml

    path = tmp_path / "doc.yaml"
    path.write_text(yaml.safe_dump(DOC), encoding="utf-8")
    server = LoopbackServer(openapi=path)
    server.route("POST", "/v2/notes", lambda r: {"id": "1", "text": "t"})
    with server:
        assert httpx.post(
            server.base_url + "/v2/notes", json={"text": "t"}, headers=AUTH
        ).is_success
        server.assert_no_violations()
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="not an OpenAPI document"):
        LoopbackServer(openapi=bad)


def test_text_terms_and_match_score_in_english_and_chinese() -> None:
    from hermes_core.testing.loopback import match_score, text_terms

    assert "editor" in text_terms("My favourite EDITOR is Helix")
    assert "the" not in text_terms("the editor")
    assert "乌龙" in text_terms("我喜欢乌龙茶") and "龙茶" in text_terms("我喜欢乌龙茶")
    assert match_score("Which editor do I like?", "my favourite editor is Helix") == 1
    assert match_score("我喜欢喝什么饮料？", "我最喜欢的饮料是乌龙茶") >= 2
    assert match_score("locker code", "我的猫叫墨墨") == 0


def test_two_servers_share_one_parsed_document() -> None:
    first, second = notes_double(), notes_double()
    with first, second:
        assert first.port != second.port
        for server in (first, second):
            r = httpx.post(server.base_url + "/v2/notes", json={"text": "x"}, headers=AUTH)
            assert r.status_code == 200
            server.assert_no_violations()
        assert first._validator is not None and second._validator is not None
        assert first._validator.openapi is second._validator.openapi


def test_concurrent_requests_validate_cleanly() -> None:
    import concurrent.futures as cf

    with notes_double() as server:
        with httpx.Client(base_url=server.base_url, headers=AUTH) as client:

            def hit(n: int) -> int:
                if n % 2:
                    return client.get(f"/v2/notes/n{n}", params={"full": "true"}).status_code
                return client.post("/v2/notes", json={"text": f"笔记 {n}"}).status_code

            with cf.ThreadPoolExecutor(8) as pool:
                codes = list(pool.map(hit, range(64)))
        assert codes == [200] * 64
        server.assert_no_violations()
        assert len(server.requests) == 64


def test_loopback_fixture_serves_and_records(loopback: LoopbackServer) -> None:
    loopback.route("GET", "/ping", lambda r: {"pong": r.arg("n")})
    assert httpx.get(loopback.base_url + "/ping", params={"n": "1"}).json() == {"pong": "1"}
    assert [r.path for r in loopback.requests] == ["/ping"]
