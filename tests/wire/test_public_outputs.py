"""A person reads only sentences this process wrote (issue 22, part 2), on every wire surface.

Markers (a credential of each shape, markup, a phishing line, a path, the prompt) are put into
every developer-facing input: exception messages and their causes, a CLI's stdout and stderr,
its argv and the prompt, details and their keys, hand-built details that skipped every check,
a peer's code with its own sentence and category, request paths, the log. Every public output
is then read for them: SSE, NDJSON and AI SDK chunks, `Done` after a fallback (built by hand
and run for real: a failing `claude` then the real Codex CLI against FakeProvider), typed JSON
and RFC 9457 bodies from `http_response` and from `asgi.install` over a real uvicorn server
called with httpx, `sse_response` / `ndjson_response` / `ui_message_response` there, what the
readers make of a hostile peer (and relay), and every log record the library writes. The
property tests hold the public writers to "only registry sentences, codes and numbers" for
any detail at all, and `to_sse` to one event whatever its `seq`.
"""

from __future__ import annotations

import copy
import json
import logging
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI, Request
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, Response, StreamingResponse

import recoverable as rc
from recoverable import agents, wire
from recoverable._core.categories import CATEGORY_SENTENCES, GENERIC_USER_MESSAGE
from recoverable._core.public import (
    FIX_REQUIRED_SENTENCE,
    PEER_CATEGORY,
    PEER_USER_MESSAGE,
    own_sentences,
    public_view,
)
from recoverable.testing import FakeProvider, Fault, cli_setup
from recoverable.wire import asgi
from recoverable.wire._chunks import MAX_SEQ

from ..support.cli import cli_bin_dir, find_cli
from ..support.wire import events as any_event
from ..support.wire_server import serving

SECRET = "sk-proj-" + "Q7f3kLm9Xz2Rt8Vb1Nc4Hd6Jw0Ps5Ya3Ge7Ku9Mi"
SECRET_TAIL = SECRET[len("sk-proj-") :]  # what must never show: the scrubber keeps "sk-"
AWS = "AKIAZ7QF3KLM9XR2TVB1"
HTML = "<script>alert(1)</script>"
PHISH = "Your account is locked: sign in again at http://evil.example/login now"
DEV_PATH = "/home/dev/secret-project/app.py"
PROMPT_MARK = "PROMPT-c41f"
HOSTILE = f"{HTML} {SECRET} {AWS} at {DEV_PATH} {PHISH} {PROMPT_MARK}"
"""Every marker in one developer text."""
MARKERS = (SECRET_TAIL, AWS, HTML, "alert(1)", "evil.example", DEV_PATH, PROMPT_MARK)
SECRET_MARKERS = (SECRET_TAIL, AWS)
TRACEBACK = f'Traceback (most recent call last):\n  File "{DEV_PATH}", line 3\nKeyError: {HOSTILE}'
PEER_CODE = "peer_only_failure"


def _absent(text: str, markers: tuple[str, ...] = MARKERS) -> None:
    found = [marker for marker in markers if marker in text]
    assert found == [], f"{found} in {text[:2000]!r}"


# --- every developer-facing input ------------------------------------------------------------


def _created(code: str) -> rc.ErrorDetail:
    """A detail through `create`, every developer field marked (the key of `details` too)."""
    fix: dict[str, Any] = {} if rc.codes[code].retryable else {"fix_required": HOSTILE}
    return rc.ErrorDetail.create(
        code, HOSTILE, cause=HOSTILE, source="claude", suggestion=HOSTILE,
        details={HOSTILE: HOSTILE, "stderr_tail": TRACEBACK,
                 "argv": ["claude", "-p", f"say {PROMPT_MARK} {HTML}"], "path": DEV_PATH},
        **fix,
    )  # fmt: skip


def unchecked(**fields: Any) -> rc.ErrorDetail:
    """A detail that passed no door: each field set as given. Every constructor checks
    (`ErrorDetail(...)` too), but an unpickled value or another copy's can still hold anything,
    and the public writers must not trust it."""
    detail = copy.copy(rc.ErrorDetail.create("unknown"))
    for name, value in fields.items():
        object.__setattr__(detail, name, value)
    return detail


def _by_hand(code: str, **fields: Any) -> rc.ErrorDetail:
    """A detail built without any check: every field, the code and sentence included."""
    values: dict[str, Any] = {
        "code": code, "message": HOSTILE, "category": HTML, "retryable": False,
        "fix_required": HOSTILE, "fix_command": f"rm -rf {DEV_PATH}", "user_message": PHISH,
        "source": HTML, "cause": HOSTILE, "details": {HOSTILE: [HOSTILE]}, "suggestion": HOSTILE,
    }  # fmt: skip
    return unchecked(**{**values, **fields})


def _from_peer(**fields: Any) -> rc.ErrorDetail:
    """A peer's detail for a code registered only there, in its own words."""
    payload = {"code": PEER_CODE, "message": HOSTILE, "category": HTML, "retryable": False,
               "user_message": f"{PHISH} {HTML}", "fix_required": HOSTILE,
               "details": {HOSTILE: HOSTILE}, **fields}  # fmt: skip
    return rc.ErrorDetail.from_dict(payload)


DETAILS: list[tuple[str, rc.ErrorDetail]] = [
    *((f"create-{row.code}", _created(row.code)) for row in rc.codes),
    ("by hand, a registered code", _by_hand("provider_quota_exceeded")),
    ("by hand, retryable, NaN wait", _by_hand("rate_limited", retryable=True,
                                              retry_after_ms=float("nan"))),
    ("by hand, markup as the code", _by_hand(HTML)),
    ("by hand, a credential as the code", _by_hand(SECRET)),
    ("by hand, a sentence as the code", _by_hand("Sign in at evil.example")),
    ("by hand, unknown", _by_hand("unknown")),
    ("a peer's code, its category markup", _from_peer()),
    ("a peer's code in a category of ours", _from_peer(category="billing")),
    ("a peer's code, retryable", _from_peer(retryable=True, retry_after_ms=10**30)),
    ("a cause chain of peers", _created("provider_overloaded").with_cause(_from_peer())),
]  # fmt: skip
DETAIL_IDS = [name for name, _ in DETAILS]


def _sentences() -> set[str]:
    return (
        {row.user_message for row in rc.codes}
        | set(CATEGORY_SENTENCES.values())
        | {GENERIC_USER_MESSAGE}
    )


def _check_payload(data: dict[str, Any], *, exposed: bool = False) -> None:
    """A public detail holds codes, numbers and this registry's sentences only."""
    assert set(data) == {"code", "message", "category", "retryable", "retry_after_ms",
                         "fix_required", "user_message"}  # fmt: skip
    row = rc.codes[data["code"]]  # a code of ours: a peer's is `unknown`
    assert data["category"] in {r.category for r in rc.codes} | set(CATEGORY_SENTENCES)
    assert data["user_message"] in _sentences()
    if row.code != "unknown":
        assert (data["category"], data["user_message"]) == (row.category, row.user_message)
    else:  # ours, or a peer's code: its category's sentence
        assert data["user_message"] == CATEGORY_SENTENCES.get(
            data["category"], GENERIC_USER_MESSAGE
        )
    if not exposed:
        assert data["message"] == data["user_message"]
    fixes = {r.fix_required for r in rc.codes if r.fix_required} | {FIX_REQUIRED_SENTENCE}
    assert data["fix_required"] is None or data["fix_required"] in fixes
    assert type(data["retryable"]) is bool
    wait = data["retry_after_ms"]
    assert (wait is None) is (not data["retryable"])
    assert wait is None or (type(wait) is int and 0 <= wait <= 7 * 86400 * 1000)


def _check_chunk(data: dict[str, Any]) -> None:
    """Every detail a public chunk holds is a public payload."""
    if data["type"] == "error":
        # beside the detail: the seed's fields, each ours (a CLI of this library) or a number
        context = {"agent", "agent_kind", "timestamp", "step", "attempt"}
        assert set(data) <= {"type", "severity", "detail", "seq", *context}
        assert data.get("agent") in {None, "claude", "codex", "gemini"}
        assert data.get("agent_kind") in {None, "cli"}
        numbers = [data[key] for key in ("timestamp", "step", "attempt") if key in data]
        assert all(type(number) is int for number in numbers)
        _check_payload(data["detail"])
    elif data["type"] == "tool_end":
        assert data["error"] is None
        if data["detail"] is not None:
            _check_payload(data["detail"])
    elif data["type"] == "done":
        result = data["result"]
        assert (result["exit_code"], result["signal"], result["session_id"]) == (None, None, None)
        assert (result["stderr_tail"], result["cli"]) == ("", None)
        assert "events" not in result
        for detail in [result["error"], *result["failures"]]:
            if detail is not None:
                _check_payload(detail)


def _public_texts(event: agents.Event) -> list[str]:
    """What each public writer sends of one event (checked chunk by chunk on the way)."""
    texts = []
    for seq in (None, 7):
        sse = wire.to_sse(event, seq=seq, public=True)
        line = wire.to_ndjson(event, seq=seq, public=True)
        if sse:
            _check_chunk(json.loads(sse.split("data: ", 1)[1]))
        if line:
            _check_chunk(json.loads(line))
        texts += [sse, line]
    texts.append(wire.to_ui_message_stream([event]))
    return texts


# --- the pure writers, table by table ---------------------------------------------------------


@pytest.mark.parametrize("detail", [d for _, d in DETAILS], ids=DETAIL_IDS)
def test_no_developer_text_reaches_a_public_chunk(detail: rc.ErrorDetail) -> None:
    result = agents.RunResult(
        False, "the answer", detail, exit_code=1, signal=9, session_id=f"s-{HTML}",
        usage={"input_tokens": 5, HOSTILE: 1, "note": HOSTILE, "nested": {"n": 1, "x": HTML}},
        cost_usd=0.25, stderr_tail=TRACEBACK, cli=HTML, failures=(detail, _from_peer()),
        events=(agents.Raw("claude", HOSTILE),),
    )  # fmt: skip
    sent: list[agents.Event] = [
        agents.ErrorEvent(detail), agents.ErrorEvent(detail, "warning"),
        agents.ToolEnd("t1", False, None, HOSTILE, detail),
        agents.ToolEnd("t2", False, None, HOSTILE), agents.Done(result),
        agents.Raw("claude", {"cwd": DEV_PATH, HTML: HOSTILE}),
        agents.TurnEnd({"input_tokens": 3, HTML: HOSTILE}),
    ]  # fmt: skip
    for event in sent:
        for text in _public_texts(event):
            _absent(text)
    payload = wire.public_payload(detail)
    _check_payload(payload)
    (done,) = wire.read_sse(wire.to_sse(agents.Done(result), public=True))
    assert isinstance(done, agents.Done)
    assert (done.result.text, done.result.cost_usd) == ("the answer", 0.25)  # the product
    assert done.result.usage == {"input_tokens": 5, "nested": {"n": 1}}  # numbers only
    # the developer side still has every word: the public writers are what drop them
    assert HTML in json.dumps(agents.Done(result).result.to_dict())


@pytest.mark.parametrize("expose_message", [False, True])
@pytest.mark.parametrize("problem", [False, True])
@pytest.mark.parametrize("detail", [d for _, d in DETAILS], ids=DETAIL_IDS)
def test_no_developer_text_reaches_an_http_body(
    detail: rc.ErrorDetail, problem: bool, expose_message: bool
) -> None:
    status, headers, body = wire.http_response(detail, problem=problem,
                                               expose_message=expose_message)  # fmt: skip
    data = json.loads(body)
    view = public_view(detail)
    assert status == view.http_status
    registered = rc.codes.get(data["code"]) is not None
    if expose_message and registered and data["code"] not in ("unknown", "internal_error"):
        _absent(data["message"], SECRET_MARKERS)  # the developer asked for it: scrubbed
        _absent(json.dumps({k: v for k, v in data.items() if k != "message"}))
    else:
        assert "message" not in data
        _absent(body.decode())
    _absent(json.dumps(headers))
    assert data["fix_required"] in ({r.fix_required for r in rc.codes} | {FIX_REQUIRED_SENTENCE})
    assert view.user_message in _sentences()
    if problem:
        assert data["status"] == status
        assert uuid.UUID(data["instance"]).urn == data["instance"]
        assert data["type"] == f"urn:recoverable:code:{data['code']}"
        assert data["detail"] == view.user_message
    else:
        assert data["error"] == view.user_message


def test_a_peer_code_reads_its_category_sentence_everywhere() -> None:
    peer = _from_peer(category="billing")
    assert peer.code == PEER_CODE
    for text in (wire.to_sse(peer, public=True), wire.to_ndjson(peer, public=True),
                 wire.http_response(peer, problem=True)[2].decode()):  # fmt: skip
        assert CATEGORY_SENTENCES["billing"] in text
        assert '"code":"unknown"' in text
        _absent(text, (*MARKERS, PEER_CODE))  # not ours: 64 letters can spell a sentence
    ui = wire.to_ui_message_stream([agents.ErrorEvent(peer)])
    assert CATEGORY_SENTENCES["billing"] in ui
    _absent(ui)
    assert public_view(_from_peer()).category == "unknown"  # markup is not a category
    assert public_view(_from_peer()).user_message == GENERIC_USER_MESSAGE


@pytest.mark.parametrize(
    ("instance", "expected"),
    [
        (None, None),
        (uuid.UUID(int=7), "urn:uuid:00000000-0000-0000-0000-000000000007"),
        ("URN:UUID:00000000-0000-0000-0000-00000000000A",
         "urn:uuid:00000000-0000-0000-0000-00000000000a"),
    ],
)  # fmt: skip
def test_a_problem_instance_is_a_urn_uuid(instance: Any, expected: str | None) -> None:
    _, _, body = wire.http_response(rc.ErrorDetail.create("conflict"), problem=True,
                                    instance=instance)  # fmt: skip
    sent = json.loads(body)["instance"]
    assert sent == expected if expected else uuid.UUID(sent).urn == sent


@pytest.mark.parametrize(
    "instance",
    [f"/runs/{SECRET}", HTML, "/x" * 30_000, "urn:uuid:not-a-uuid", f"urn:uuid:{uuid.uuid4()}\n",
     "https://example.com/", 7],
)  # fmt: skip
def test_request_text_is_never_a_problem_instance(instance: Any) -> None:
    with pytest.raises(ValueError, match="never request text"):
        wire.http_response(rc.ErrorDetail.create("conflict"), problem=True, instance=instance)


@pytest.mark.parametrize(("status", "error"), [(405, None), (418, None), (599, None),
                         (200, ValueError), (600, ValueError), (True, TypeError),
                         ("405", TypeError)])  # fmt: skip
def test_the_status_member_is_the_status_sent(status: Any, error: type | None) -> None:
    detail = rc.ErrorDetail.create("invalid_input")
    if error is not None:
        with pytest.raises(error):
            wire.http_response(detail, problem=True, status=status)
        return
    sent, _, body = wire.http_response(detail, problem=True, status=status)
    assert sent == json.loads(body)["status"] == status


SEQS: list[tuple[Any, type[Exception]]] = [
    ("1\ndata: {\"type\":\"text_delta\",\"text\":\"injected\"}", TypeError),
    ("1", TypeError), (b"1", TypeError), (1.0, TypeError), (True, TypeError), ([1], TypeError),
    (-1, ValueError), (MAX_SEQ + 1, ValueError), (2**64, ValueError),
]  # fmt: skip


@pytest.mark.parametrize(("seq", "error"), SEQS)
def test_a_seq_that_is_not_a_number_is_refused(seq: Any, error: type[Exception]) -> None:
    for public in (False, True):
        with pytest.raises(error, match="seq"):
            wire.to_sse(agents.TextDelta("a"), seq=seq, public=public)
        with pytest.raises(error, match="seq"):
            wire.to_ndjson(agents.TextDelta("a"), seq=seq, public=public)
    assert wire.read_sse_chunks(wire.to_sse(agents.TextDelta("a"), seq=MAX_SEQ)) == [
        wire.Chunk(agents.TextDelta("a"), MAX_SEQ)
    ]


def test_tool_text_and_input_are_scrubbed_in_public() -> None:
    start = agents.ToolStart("c1", "Bash", {"command": f"curl -H 'x-api-key: {SECRET}'",
                                            SECRET: [AWS, 1, None]})  # fmt: skip
    end = agents.ToolEnd("c1", True, f"OPENAI_API_KEY={SECRET}\nAWS={AWS}\n")
    for event in (start, end):
        for text in _public_texts(event):
            _absent(text, SECRET_MARKERS)
    assert "OPENAI_API_KEY=" in wire.to_sse(end, public=True)  # the rest of the output stays


# --- the readers: a peer's words are never ours -----------------------------------------------

PEER_BODIES: dict[str, tuple[int, dict[str, Any]]] = {
    "typed": (502, {"error": f"{PHISH} {HTML}", "code": PEER_CODE, "retryable": False,
                    "message": HOSTILE, "fix_required": HOSTILE}),
    "problem": (502, {"type": f"urn:recoverable:code:{PEER_CODE}", "title": HTML, "status": 502,
                      "detail": f"{PHISH} {HTML}", "instance": f"/x/{SECRET}", "code": PEER_CODE,
                      "retryable": False}),
    "envelope": (500, {"ok": False, "data": None, "warnings": [], "meta": {},
                       "error": {"code": "PEER_ONLY_FAILURE", "message": HOSTILE,
                                 "category": HTML, "user_message": f"{PHISH} {HTML}"}}),
    "payload": (500, {"error": {"code": PEER_CODE, "message": HOSTILE, "category": HTML,
                                "retryable": False, "user_message": f"{PHISH} {HTML}"}}),
}  # fmt: skip
PEER_STREAM = (
    "id: 1\ndata: " + json.dumps({"type": "error", "severity": "error", "detail": {
        "code": PEER_CODE, "message": HOSTILE, "category": HTML, "user_message": PHISH}})
    + "\n\nid: 2\ndata: " + json.dumps({"type": "tool_end", "tool_id": "t", "success": False,
        "error": HOSTILE, "detail": {"code": PEER_CODE, "message": "m", "user_message": PHISH}})
    + "\n\nid: 3\ndata: " + json.dumps({"type": "done", "result": {"success": False,
        "text": "partial", "stderr_tail": TRACEBACK, "error": {"code": PEER_CODE, "message": "m",
        "category": "billing", "user_message": PHISH}}})
    + "\n\n"
)  # fmt: skip


def _check_read(detail: rc.ErrorDetail) -> None:
    """A detail read from the hostile peer: our sentence, the peer's kept as developer text."""
    assert detail.code == PEER_CODE
    assert detail.user_message in (GENERIC_USER_MESSAGE, CATEGORY_SENTENCES["billing"])
    assert detail.category in ("unknown", "billing")
    said = detail.details.get(PEER_USER_MESSAGE, "")
    assert said == "" or "evil.example" in said  # kept for the developer, as developer text
    for value in (detail.user_message, detail.category):
        _absent(value)
    _absent(json.dumps(detail.to_dict()), SECRET_MARKERS)


@pytest.mark.parametrize("style", list(PEER_BODIES))
def test_read_response_never_takes_a_peers_sentence(style: str) -> None:
    status, body = PEER_BODIES[style]
    detail = wire.read_response(status, {}, json.dumps(body).encode())
    _check_read(detail)
    assert PEER_USER_MESSAGE in detail.details
    if style in ("envelope", "payload"):
        assert HTML in detail.details[PEER_CATEGORY]  # developer text, where it belongs
    for text in (wire.to_sse(detail, public=True), wire.http_response(detail)[2].decode()):
        _absent(text)


def test_the_stream_readers_never_take_a_peers_sentence() -> None:
    error, tool_end, done = wire.read_sse(PEER_STREAM)
    assert isinstance(error, agents.ErrorEvent)
    assert isinstance(tool_end, agents.ToolEnd)
    assert isinstance(done, agents.Done)
    assert tool_end.detail is not None
    assert done.result.error is not None
    for detail in (error.detail, tool_end.detail, done.result.error):
        _check_read(detail)
    ndjson = "".join(wire.to_ndjson(event) for event in (error, tool_end, done))
    assert wire.read_ndjson(ndjson) == [error, tool_end, done]  # read again: the same
    for event in (error, tool_end, done):
        for text in _public_texts(event):
            _absent(text)


def test_own_sentences_is_the_detail_itself_when_it_says_our_words() -> None:
    ours = rc.ErrorDetail.create("provider_rate_limited", HOSTILE)
    assert own_sentences(ours) is ours
    chained = ours.with_cause(_from_peer(category="billing"))
    mended = own_sentences(chained)
    assert isinstance(mended.cause, rc.ErrorDetail)
    assert mended.cause.user_message == CATEGORY_SENTENCES["billing"]
    assert mended.message == chained.message  # developer text stays where it was


# --- a real fallback through agents.stream ----------------------------------------------------

FAILING_CLAUDE = """#!{python}
import json, sys
# Claude's stream: a session id and cwd, then a quota failure whose text quotes the run's argv
# (the prompt), a path, markup and a key; a traceback on stderr.
print({traceback!r}, file=sys.stderr)
print(json.dumps({{"type": "system", "subtype": "init", "session_id": {html!r},
                  "cwd": {path!r}}}), flush=True)
print(json.dumps({{"type": "result", "subtype": "success", "is_error": True,
                  "result": "Credit balance is too low " + {hostile!r} + " ".join(sys.argv),
                  "session_id": "s-1"}}), flush=True)
sys.exit(1)
"""
PROMPT = f"Say hello. {PROMPT_MARK} {HTML} {SECRET}"


def _fallback_env(fake: FakeProvider, home: Path) -> dict[str, Any]:
    """Options for `agents.stream(PROMPT, ["claude", "codex"])`: a `claude` that fails with
    a quota error (so the order moves on) ahead of the real CLIs on PATH."""
    bin_dir = home / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    claude = bin_dir / "claude"
    claude.write_text(FAILING_CLAUDE.format(python=sys.executable, traceback=TRACEBACK,
                                            html=HTML, path=DEV_PATH, hostile=HOSTILE))  # fmt: skip
    claude.chmod(0o755)
    env = cli_setup(["claude", "codex"], fake, home, max_retries=0).environ()
    real = Path(find_cli("codex", cli_bin_dir())).parent
    env["PATH"] = f"{bin_dir}:{real}:{env.get('PATH', '')}"
    work = home / "work"
    work.mkdir(parents=True, exist_ok=True)
    return {"env": env, "inherit_env": False, "cwd": str(work), "timeout": 90.0}


async def test_a_done_after_a_real_fallback_carries_no_developer_text(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        options = _fallback_env(fake, tmp_path)
        events = [e async for e in agents.stream(PROMPT, ["claude", "codex"], **options)]
        fake.fail(Fault.insufficient_quota(), times=None)  # now Codex fails too
        failed = [e async for e in agents.stream(PROMPT, ["claude", "codex"], **options)]
    done, last = events[-1], failed[-1]
    assert isinstance(done, agents.Done)
    assert isinstance(last, agents.Done)
    assert (done.result.success, done.result.cli, done.result.text) == (
        True, "codex", "Hello from FakeProvider.",
    )  # fmt: skip
    [failure] = done.result.failures
    assert (failure.code, failure.source) == ("provider_quota_exceeded", "claude")
    # the developer side holds the prompt, markup and path: the test's markers got in
    assert PROMPT_MARK in failure.message
    assert HTML in failure.message
    assert last.result.error is not None
    assert last.result.error.code == "provider_quota_exceeded"
    for event in [*events, *failed]:
        for text in _public_texts(event):
            _absent(text)
    (read,) = wire.read_sse(wire.to_sse(done, public=True))
    assert isinstance(read, agents.Done)
    assert read.result.text == "Hello from FakeProvider."


# --- over a real server: asgi.install, the streaming responses, the log ----------------------


class Boom(Exception):
    """A bug in a route."""


def _bug() -> Exception:
    lookup: dict[str, int] = {}
    try:
        _ = lookup[HOSTILE]
    except KeyError as missing:
        raise Boom(f"lookup failed at {DEV_PATH}: {HOSTILE}") from missing
    return Boom()


RAISES: dict[str, Any] = {
    "refused": lambda: ConnectionRefusedError(HOSTILE),
    "peer": lambda: rc.RecoverableError(_from_peer(category="billing")),
    "by-hand": lambda: rc.RecoverableError(_by_hand(HTML)),
    "http-405": lambda: HTTPException(405, HOSTILE, {"allow": "GET"}),
    "http-418": lambda: HTTPException(418, HOSTILE),
    "http-404": lambda: HTTPException(404, HOSTILE),
    "quota": lambda: rc.RecoverableError(_created("provider_quota_exceeded")),
}
"""What a route raises (the bug raises from inside its own frames: `_bug`)."""


FORGED_ID = '9\ndata: {"type":"text_delta","text":"x"}'


async def _hostile_events(then: str) -> AsyncIterator[Any]:
    yield agents.TextDelta("the answer")
    yield agents.ErrorEvent(_from_peer(), "warning")
    yield agents.ToolStart("c1", "Bash", {"command": f"cat notes.txt # {SECRET} {AWS}"})
    yield agents.ToolEnd("c1", False, None, HOSTILE, _created("tool_execution_failed"))
    yield agents.Raw("claude", {"cwd": DEV_PATH, "line": HOSTILE})
    if then == "seq":  # a source that hands on chunks with a forged number
        yield wire.Chunk(agents.TextDelta("b"), FORGED_ID)  # type: ignore[arg-type]
    if then == "bug":
        raise Boom(HOSTILE)
    result = agents.RunResult(
        False, "the answer", _created("provider_quota_exceeded"), exit_code=1, signal=None,
        session_id=f"s-{HTML}", stderr_tail=TRACEBACK, cli="claude",
        failures=(_from_peer(), _created("cli_not_authenticated")),
    )  # fmt: skip
    yield agents.Done(result)


def _app(fake: FakeProvider, home: Path) -> FastAPI:
    app = FastAPI()
    asgi.install(app)

    @app.get("/raise/{kind}/{rest:path}")
    async def raising(kind: str, rest: str) -> None:
        raise (_bug() if kind == "bug" else RAISES[kind]())

    @app.get("/stream/{form}/{then}")
    async def stream(form: str, then: str) -> Response:
        source = _hostile_events(then)
        if form == "ndjson":
            return asgi.ndjson_response(source)
        if form == "ui":
            return asgi.ui_message_response(source)
        return asgi.sse_response(source)

    @app.get("/fallback")
    async def fallback() -> Response:
        options = _fallback_env(fake, home)
        return asgi.sse_response(agents.stream(PROMPT, ["claude", "codex"], **options))

    @app.get("/peer/body/{style}")
    async def peer_body(style: str) -> Response:
        status, body = PEER_BODIES[style]
        kind = "application/problem+json" if style == "problem" else "application/json"
        return JSONResponse(body, status, media_type=kind)

    @app.get("/peer/stream")
    async def peer_stream() -> Response:
        return StreamingResponse(iter([PEER_STREAM]), media_type="text/event-stream")

    @app.get("/relay/body/{style}")
    async def relay_body(style: str, request: Request) -> None:
        async with httpx.AsyncClient(base_url=str(request.base_url)) as client:
            await wire.araise_for_error(await client.get(f"/peer/body/{style}"))

    @app.get("/relay/stream")
    async def relay_stream(request: Request) -> Response:
        async def relayed() -> AsyncIterator[agents.Event]:
            async with (
                httpx.AsyncClient(base_url=str(request.base_url)) as client,
                client.stream("GET", "/peer/stream") as response,
            ):
                async for event in wire.aiter_events(response):
                    yield event

        return asgi.sse_response(relayed())

    return app


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with FakeProvider() as fake, serving(_app(fake, tmp_path_factory.mktemp("pub"))) as url:
        yield url


@pytest.fixture
def client(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=90) as client:
        yield client


HOSTILE_PATH = quote(f"{SECRET}/{HTML}/{AWS}/{PHISH}", safe="/") + f"?token={SECRET}&x={HTML}"
ANSWERS = [
    ("bug", 500, "unknown"),
    ("refused", 503, "network_error"),
    ("peer", 500, "unknown"),
    ("by-hand", 500, "unknown"),
    ("http-405", 405, "invalid_input"),
    ("http-418", 418, "invalid_input"),
    ("http-404", 404, "not_found"),
    ("quota", 502, "provider_quota_exceeded"),
]


def _records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name.startswith("recoverable")]


def _check_records(records: list[logging.LogRecord]) -> list[str]:
    """Each library record: one line, no marker in its message, args or rendered text, no
    exception attached (only the frames, as text); the rendered texts."""
    rendered = []
    formatter = logging.Formatter("%(levelname)s %(name)s %(message)s")
    for record in records:
        message = record.getMessage()
        assert "\n" not in message and "\r" not in message
        assert record.exc_info is None
        _absent(message)
        _absent(repr(record.args))
        text = formatter.format(record)
        _absent(text)
        rendered.append(text)
    return rendered


@pytest.mark.parametrize("accept", ["application/json", "application/problem+json"])
@pytest.mark.parametrize(("kind", "status", "code"), ANSWERS)
@pytest.mark.parametrize("path", ["hostile", "long"])
def test_install_answers_and_logs_no_developer_or_request_text(
    client: httpx.Client, caplog: pytest.LogCaptureFixture, kind: str, status: int, code: str,
    accept: str, path: str,
) -> None:  # fmt: skip
    caplog.set_level(logging.DEBUG, logger="recoverable")
    rest = HOSTILE_PATH if path == "hostile" else "x" * 6000 + quote(HTML)
    response = client.get(f"/raise/{kind}/{rest}", headers={"accept": accept})
    assert response.status_code == status
    _absent(response.text)
    _absent(json.dumps(dict(response.headers)))
    assert "x" * 100 not in response.text
    body = response.json()
    assert body["code"] == code
    sentence = body["detail" if accept.endswith("problem+json") else "error"]
    assert sentence == (
        CATEGORY_SENTENCES["billing"] if kind == "peer" else rc.codes[code].user_message
    )
    if accept.endswith("problem+json"):
        assert body["status"] == status
        assert uuid.UUID(body["instance"]).urn == body["instance"]
    read = wire.read_response(response.status_code, response.headers, response.content)
    assert read.code == code
    assert read.user_message == rc.codes[code].user_message
    [record] = _records(caplog)
    [text] = _check_records([record])
    logged = PEER_CODE if kind == "peer" else code  # the operator's log keeps a peer's code
    assert f"GET /raise/{{kind}}/{{rest:path}} failed: {logged} ({status})" in text
    if accept.endswith("problem+json"):
        assert body["instance"] in text  # a client's report finds the record
    if kind == "bug":  # a likely bug: where it happened, without what it said
        assert record.levelno == logging.ERROR
        assert "messages withheld" in text
        assert f"{Boom.__module__}.Boom" in text
        assert "builtins.KeyError" in text
        assert ", in _bug" in text


@pytest.mark.parametrize("form", ["sse", "ndjson", "ui"])
@pytest.mark.parametrize("then", ["end", "bug", "seq"])
def test_a_hostile_stream_is_served_without_developer_text(
    client: httpx.Client, caplog: pytest.LogCaptureFixture, form: str, then: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="recoverable")
    with client.stream("GET", f"/stream/{form}/{then}") as response:
        raw = response.read().decode()
    _absent(raw)
    assert 'text_delta","text":"x"' not in raw  # the forged id started no event
    events = wire.read_sse(raw) if form != "ndjson" else wire.read_ndjson(raw)
    if form != "ui":
        for line in raw.splitlines():
            if line.startswith("data: ") or (form == "ndjson" and line):
                _check_chunk(json.loads(line.removeprefix("data: ")))
        assert not any(isinstance(event, agents.Raw) for event in events)
        errors = [e for e in events if isinstance(e, agents.ErrorEvent) and e.severity == "error"]
        if then == "end":
            assert isinstance(events[-1], agents.Done)
        else:  # the source failed (a bug, a forged chunk): one classified error ends it
            assert [e.detail.code for e in errors] == ["unknown"]
            assert events[-1] is errors[0]
    records = _records(caplog)
    _check_records(records)
    assert len(records) == (0 if then == "end" else 1)


def test_a_real_fallback_streamed_by_the_server(client: httpx.Client) -> None:
    with client.stream("GET", "/fallback") as response:
        raw = response.read().decode()
    _absent(raw)
    events = wire.read_sse(raw)
    done = events[-1]
    assert isinstance(done, agents.Done)
    assert (done.result.success, done.result.text) == (True, "Hello from FakeProvider.")
    assert '"failures":[{"code":"provider_quota_exceeded"' in raw  # its public view


@pytest.mark.parametrize("style", list(PEER_BODIES))
def test_a_client_reads_and_relays_a_hostile_peer(
    client: httpx.Client, caplog: pytest.LogCaptureFixture, style: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="recoverable")
    with pytest.raises(rc.RecoverableError) as raised:
        wire.raise_for_error(client.get(f"/peer/body/{style}"))
    _check_read(raised.value.detail)
    response = client.get(f"/relay/body/{style}", headers={"accept": "application/problem+json"})
    _absent(response.text)
    body = response.json()
    assert (body["code"], body["status"]) == ("unknown", response.status_code)
    assert body["detail"] in (GENERIC_USER_MESSAGE, CATEGORY_SENTENCES["billing"])
    _check_records(_records(caplog))


def test_a_client_reads_and_relays_a_hostile_peers_stream(client: httpx.Client) -> None:
    with client.stream("GET", "/peer/stream") as response:
        read = list(wire.iter_events(response))
    assert [event.type for event in read] == ["error", "tool_end", "done"]
    assert isinstance(read[0], agents.ErrorEvent)
    _check_read(read[0].detail)
    with client.stream("GET", "/relay/stream") as response:
        raw = response.read().decode()
    _absent(raw)
    assert [event.type for event in wire.read_sse(raw)] == ["error", "tool_end", "done"]


# --- properties: any detail, any seq ----------------------------------------------------------

hostile_texts = st.sampled_from([HOSTILE, HTML, SECRET, AWS, PHISH, TRACEBACK, ""]) | st.text(
    max_size=30
)
any_code = (
    st.sampled_from([row.code for row in rc.codes])
    | st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
    | hostile_texts
)
any_wait = st.none() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)


@st.composite
def any_detail(draw: st.DrawFn) -> rc.ErrorDetail:
    """Any detail at all: built by hand (any text in any field), through `create`, or read."""
    how = draw(st.sampled_from(["hand", "create", "payload"]))
    texts = {name: draw(hostile_texts) for name in ("message", "user_message", "category")}
    details = draw(st.dictionaries(hostile_texts, hostile_texts | st.integers(), max_size=3))
    if how == "create":
        code = draw(st.sampled_from([row.code for row in rc.codes]))
        return rc.ErrorDetail.create(code, texts["message"], details=details,
                                     cause=draw(hostile_texts))  # fmt: skip
    fields: dict[str, Any] = {"code": draw(any_code), "retryable": draw(st.booleans()),
              "retry_after_ms": draw(any_wait), "fix_required": draw(st.none() | hostile_texts),
              "details": details, **texts}  # fmt: skip
    if how == "payload":
        try:
            return rc.ErrorDetail.from_dict(fields)
        except rc.PayloadError:
            assume(False)
            raise
    return unchecked(**fields)


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(any_detail(), st.booleans())
def test_any_detail_written_publicly_says_only_registry_words(
    detail: rc.ErrorDetail, problem: bool
) -> None:
    _check_payload(wire.public_payload(detail))
    result = agents.RunResult(False, "", detail, failures=(detail,))
    for event in (agents.ErrorEvent(detail), agents.ToolEnd("t", False, None, None, detail),
                  agents.Done(result)):  # fmt: skip
        for text in _public_texts(event):
            _absent(text)
    _, _, body = wire.http_response(detail, problem=problem)
    _absent(body.decode())
    data = json.loads(body)
    assert data["detail" if problem else "error"] in _sentences()
    ui = wire.to_ui_message_stream([agents.ErrorEvent(detail)])
    texts = [json.loads(line[6:]) for line in ui.split("\n\n") if line[6:] not in ("", "[DONE]")]
    assert [chunk["errorText"] for chunk in texts if chunk["type"] == "error"] == [
        public_view(detail).user_message
    ]


@PROPERTY
@given(any_event, st.none() | st.integers() | st.text(max_size=12) | st.booleans() | st.floats(),
       st.booleans())  # fmt: skip
def test_to_sse_writes_at_most_one_event_whatever_the_seq(
    event: agents.Event, seq: Any, public: bool
) -> None:
    valid = seq is None or (type(seq) is int and 0 <= seq <= MAX_SEQ)
    try:
        text = wire.to_sse(event, seq=seq, public=public)
        line = wire.to_ndjson(event, seq=seq, public=public)
    except (TypeError, ValueError):
        assert not valid
        return
    assert valid
    assert text.count("\n\n") == (1 if text else 0)
    assert all(part.startswith(("id: ", "data: ")) for part in text.split("\n") if part)
    chunks = wire.read_sse_chunks(text)
    assert len(chunks) <= 1
    if chunks:
        assert chunks[0].seq == seq
    assert line.count("\n") == (1 if line else 0)
    assert len(wire.read_ndjson_chunks(line)) == (1 if line else 0)
