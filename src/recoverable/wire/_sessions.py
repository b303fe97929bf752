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
"""

from __future__ import annotations

import threading

from .._core.detail import ErrorDetail
from .._core.error import RecoverableError
from ._resume import StreamLog

__all__ = ["Sessions"]

MAX_SESSION_ID_CHARS = 256


class Sessions:
    """Each session's current run (its `StreamLog`), at most `max_sessions` kept (the ended
    ones go first)."""

    def __init__(self, *, max_sessions: int = 10_000, max_events: int = 10_000) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self._max_sessions = max_sessions
        self._max_events = max_events
        self._current: dict[str, StreamLog] = {}
        self._lock = threading.Lock()

    def start(self, session_id: str, *, supersede: bool = False) -> StreamLog:
        """A new log for a run of `session_id`, to publish the run into (`log=`): its claim
        is refused with `state_already_running` while the session's run is live (unless
        `supersede`: the live run is ended with `state_run_superseded` when this one starts).
        A session id that is not 1 to 256 characters is `invalid_input` (RecoverableError)."""
        _checked(session_id)

        def claim(log: StreamLog) -> ErrorDetail | None:
            return self._claim(session_id, log, supersede)

        return StreamLog(max_events=self._max_events, on_claim=claim)

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
            if current is not None and current is not log and current.live:
                if not supersede:
                    return self.busy(session_id)
                current.supersede(by="a newer run of the session")
            self._current.pop(session_id, None)
            self._current[session_id] = log  # last in the order: the newest
            self._evict(session_id)
        return None

    def _evict(self, keep: str) -> None:
        """Past `max_sessions`: the oldest ended session goes, else the oldest (never `keep`)."""
        while len(self._current) > self._max_sessions:
            others = [key for key in self._current if key != keep]
            ended = next((key for key in others if not self._current[key].live), None)
            self._current.pop(ended if ended is not None else others[0])


def _checked(session_id: object) -> str:
    if not isinstance(session_id, str) or not 1 <= len(session_id) <= MAX_SESSION_ID_CHARS:
        raise RecoverableError(
            "invalid_input",
            f"a session id is a string of 1 to {MAX_SESSION_ID_CHARS} characters",
        )
    return session_id
