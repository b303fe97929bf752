"""One run at a time per session, and each session's stream kept for the clients that resume.

    sessions = wire.Sessions()                       # one per app

    @app.post("/chat/{session_id}")
    async def chat(session_id: str, prompt: str):
        log = sessions.start(session_id)            # the run's log, claimed by its response
        return asgi.sse_response(agents.stream(prompt, cli="claude"), log=log)

    @app.get("/chat/{session_id}/stream")
    async def resume(session_id: str, request: Request):
        return asgi.resume_response(sessions.get(session_id), request)

A run becomes the session's current one when its response's publisher claims its log (the
response's first event); while the session's current run is live, the claim is refused with
`state_already_running` (409, retryable once it ends), so the response answers that status
before its first byte, in its own form (typed JSON or problem details; the AI SDK's stream:
the sentence `useChat` shows), and its source never starts. With `supersede=True` the new run
takes over instead: the old one's stream ends with `state_run_superseded` and its run is
stopped. A route that must refuse before it does anything else asks `busy(session_id)` (the
refusal, or None) and raises it. A route that fails between `start` and its response leaves
the session as it was. `get` is the current log (None: no such session: a resume answers
`state_session_not_found`, 404).

A run start may carry a request key (`Idempotency-Key`, read by `idempotency_key(headers)`),
so that a client that sends it again (its connection dropped, its retry fired) is not given a
second run:

    @app.post("/chat/{session_id}")
    async def chat(session_id: str, request: Request):
        body = await request.json()
        log = sessions.start(
            session_id, request_key=wire.idempotency_key(request.headers), input=body
        )
        return asgi.sse_response(agents.stream(body["prompt"], cli="claude"), log=log)

The same key with the same input is the same run: `start` gives the same log, and the
response replays it from its first event (live, while the run is) instead of starting its
source; the busy check does not apply to it. The same key with other input is
`state_request_key_conflict` (409, nothing started): a new request needs a new key. A key that
is not 1 to 128 characters of `[A-Za-z0-9._:-]` is `invalid_input` (400), the key never
repeated. A keyed run goes on when its client goes away (`_opening`: its log keeps what it
sends, for the same send again and for resumes); one that ended cancelled all the same
(`run_cancelled`: the server stopping) is not kept under its key, and the same send starts it
again.

A key names a run of its session (another session may use the same key). The keys kept are
the newest `max_keys` across all sessions, and every live run's besides (forgetting a live
run's key would give its resend a second run): one bound for the whole server, as the
sessions themselves are unbounded in number. A keyed run may outlive its client, so at most
`max_keyed_runs` of them are live at once: a keyed start past that is refused when its
response claims its log, with `unavailable` (503, retryable, `Retry-After: 1`), its source
never started (the same send again, once a run has ended, starts it). Runs without a key are
not counted: they stop with their client. An `input` JSON cannot write (a set, a cycle, deep
nesting, an int past Python's digit limit, an object) is `invalid_input` (400), the input
never repeated.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass

from .._classify.http import header_value
from .._core.detail import ErrorDetail
from .._core.error import RecoverableError
from .._retry.keys import KEY_HEADER, check_request_key
from ._resume import StreamLog

__all__ = ["Sessions", "idempotency_key"]


def idempotency_key(headers: object) -> str | None:
    """The request's `Idempotency-Key` header (a mapping, httpx or Starlette headers, or
    (name, value) pairs) as given, None when absent; `Sessions.start` checks it."""
    return header_value(headers, KEY_HEADER.lower())


@dataclass(frozen=True, slots=True)
class _Keyed:
    """A keyed run start: what its input was (a digest), and its run's log."""

    input_digest: str
    log: StreamLog


MAX_SESSION_ID_CHARS = 256
INPUT_NOT_DATA = "a run's input is JSON data, text or bytes"
"""The sentence of the `invalid_input` an input JSON cannot write raises (none of the input)."""


class Sessions:
    """Each session's current run (its `StreamLog`), at most `max_sessions` kept (the ended
    ones forgotten first; a new session's start while all are live is `unavailable`); the
    newest `max_keys` request keys (and every live run's); at most `max_keyed_runs` keyed runs
    live at once (see the module's docstring)."""

    def __init__(
        self,
        *,
        max_sessions: int = 10_000,
        max_events: int = 10_000,
        max_keys: int = 10_000,
        max_keyed_runs: int = 1_000,
    ) -> None:
        for name, bound in (
            ("max_sessions", max_sessions),
            ("max_keys", max_keys),
            ("max_keyed_runs", max_keyed_runs),
        ):
            if bound < 1:
                raise ValueError(f"{name} must be at least 1")
        self._max_sessions = max_sessions
        self._max_events = max_events
        self._max_keys = max_keys
        self._max_keyed_runs = max_keyed_runs
        self._current: dict[str, StreamLog] = {}
        self._keys: OrderedDict[tuple[str, str], _Keyed] = OrderedDict()
        self._keyed_runs: set[StreamLog] = set()  # claimed keyed logs, the ended pruned
        self._lock = threading.Lock()

    def start(
        self,
        session_id: str,
        *,
        supersede: bool = False,
        request_key: str | None = None,
        input: object = None,
    ) -> StreamLog:
        """A new log for a run of `session_id`, to publish the run into (`log=`): its claim
        is refused with `state_already_running` while the session's run is live (unless
        `supersede`: the live run is ended with `state_run_superseded` when this one starts).
        A session id that is not 1 to 256 characters is `invalid_input` (RecoverableError).

        `request_key` (the request's `Idempotency-Key`) with `input` (what the run is asked:
        JSON data, text or bytes): the same key and input again give the same log, which the
        response replays; the same key with other input raises `state_request_key_conflict`;
        a malformed key, or an input JSON cannot write, raises `invalid_input` (see the
        module's docstring)."""
        _checked(session_id)
        if request_key is None:
            return self._new_log(session_id, supersede, None)
        key = check_request_key(request_key)
        digest = _digest(input)
        with self._lock:
            held = self._keys.get((session_id, key))
            if held is not None and not held.log.client_gone:
                if held.input_digest != digest:
                    raise RecoverableError(
                        "state_request_key_conflict",
                        "this request key was sent before with other input",
                    )
                return held.log
            log = self._new_log(session_id, supersede, key)
            self._keys[(session_id, key)] = _Keyed(digest, log)
            self._keys.move_to_end((session_id, key))
            self._forget_keys()
        return log

    def _forget_keys(self) -> None:
        """Past `max_keys`: the oldest keys go, never a live run's (those are at most
        `max_keyed_runs`, so the scan stops soon)."""
        excess = len(self._keys) - self._max_keys
        forgotten: list[tuple[str, str]] = []
        for name, held in self._keys.items():
            if len(forgotten) >= excess:
                break
            if not held.log.live:
                forgotten.append(name)
        for name in forgotten:
            del self._keys[name]

    def _new_log(self, session_id: str, supersede: bool, key: str | None) -> StreamLog:
        def claim(log: StreamLog) -> ErrorDetail | None:
            return self._claim(session_id, log, supersede)

        return StreamLog(max_events=self._max_events, on_claim=claim, request_key=key)

    def get(self, session_id: str) -> StreamLog | None:
        """The session's current log (live or ended), None when there is none."""
        return self._current.get(session_id) if isinstance(session_id, str) else None

    def __len__(self) -> int:
        return len(self._current)

    def busy(self, session_id: str) -> ErrorDetail | None:
        """`state_already_running` when the session's current run is live, else None."""
        current = self._current.get(session_id)
        if current is None or not current.live:
            return None
        return ErrorDetail.create(
            "state_already_running",
            "the session already has a live run",
            details={"last_seq": current.last_seq},
        )

    def _claim(self, session_id: str, log: StreamLog, supersede: bool) -> ErrorDetail | None:
        """The moment a run starts: it becomes the session's current one, unless another is."""
        with self._lock:
            current = self._current.get(session_id)
            live = current if current is not None and current is not log and current.live else None
            if live is not None and not supersede:
                return self.busy(session_id)
            full = self._sessions_full(session_id)
            if full is not None:
                return full
            if log.request_key is not None:
                full = self._keyed_full(ending=live)
                if full is not None:
                    return full
                self._keyed_runs.add(log)
            if live is not None:
                live.supersede(by="a newer run of the session")
            self._current.pop(session_id, None)
            self._current[session_id] = log  # last in the order: the newest
        return None

    def _keyed_full(self, ending: StreamLog | None) -> ErrorDetail | None:
        """`unavailable` when `max_keyed_runs` keyed runs are live (`ending`, about to be
        superseded, not counted), else None."""
        if len(self._keyed_runs) >= self._max_keyed_runs:
            self._keyed_runs = {run for run in self._keyed_runs if run.live}
        if len(self._keyed_runs) - (ending in self._keyed_runs) < self._max_keyed_runs:
            return None
        return ErrorDetail.create(
            "unavailable",
            "this server runs as many keyed runs as it may at once",
            details={"max_keyed_runs": self._max_keyed_runs},
        )

    def _sessions_full(self, session_id: str) -> ErrorDetail | None:
        """Room for a new session past `max_sessions`: the oldest ended one is forgotten;
        when every one is live, `unavailable` (forgetting a live run's session would let a
        second run of it start beside the first, and its resumes find nothing)."""
        if session_id in self._current or len(self._current) < self._max_sessions:
            return None
        ended = next((key for key, log in self._current.items() if not log.live), None)
        if ended is not None:
            del self._current[ended]
            return None
        return ErrorDetail.create(
            "unavailable",
            "this server runs as many sessions as it may at once",
            details={"max_sessions": self._max_sessions},
        )


def _checked(session_id: object) -> str:
    if not isinstance(session_id, str) or not 1 <= len(session_id) <= MAX_SESSION_ID_CHARS:
        raise RecoverableError(
            "invalid_input",
            f"a session id is a string of 1 to {MAX_SESSION_ID_CHARS} characters",
        )
    return session_id


def _digest(value: object) -> str:
    """What a run start asked, as a digest: bytes and text as they are, else canonical JSON
    (a value JSON cannot write is `invalid_input`, with our sentence alone)."""
    if isinstance(value, bytes):
        data = b"b" + value
    elif isinstance(value, str):
        data = b"s" + value.encode("utf-8", "surrogatepass")
    else:
        try:  # NaN is written (`NaN`): the same input gives the same digest all the same
            text = json.dumps(value, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):  # a set, a cycle, deep nesting, ...
            raise RecoverableError("invalid_input", INPUT_NOT_DATA) from None
        data = b"j" + text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()
