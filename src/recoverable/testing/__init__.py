"""A fault-injecting fake LLM provider, for testing how an agent handles failures.

`FakeProvider` serves the Anthropic Messages, OpenAI Chat Completions, OpenAI Responses
and Gemini generateContent wire APIs on loopback (standard library only, a daemon
thread), so the real SDK clients can be pointed at it. Each request takes the next
queued `Fault`, or else gets the configured `Reply`; every request is recorded::

    import openai
    from recoverable.testing import FakeProvider, Fault, Reply

    with FakeProvider() as fake:
        fake.fail(Fault.rate_limited(retry_after=7))     # the next request gets a 429
        client = openai.OpenAI(api_key="x", base_url=fake.openai_url, max_retries=0)
        try:
            client.chat.completions.create(model="gpt-4o", messages=[...])
        except openai.RateLimitError as e:
            assert e.response.headers["retry-after"] == "7"
        fake.reply(Reply.tool_call("get_weather", {"city": "Paris"}))
        client.chat.completions.create(model="gpt-4o", messages=[...])   # a tool call
        assert [r.fault for r in fake.requests] == ["rate_limited", None]

Clients: ``openai.OpenAI(base_url=fake.openai_url, max_retries=0)``,
``anthropic.Anthropic(base_url=fake.url, max_retries=0)``,
``genai.Client(api_key="x", http_options=HttpOptions(base_url=fake.url))`` (keep that
client referenced: a collected ``genai.Client`` closes its HTTP client).

`FakeProvider(*, faults=(), reply=None, host="127.0.0.1", port=0, limits=None)`
    Also ``async with``, or ``start()`` / ``stop()``; ``stop()`` releases hanging
    requests, closes open connections and joins the threads. ``faults`` takes
    ``Fault`` or ``(Fault, times)`` items. Only 127.0.0.1 and ::1 are accepted.
    ``limits``: a `Limits` (see "Load and limits" below); ``fake.limits`` reads it.
``fake.url`` / ``fake.openai_url`` / ``fake.port``
    ``http://127.0.0.1:PORT`` (Anthropic, Gemini) and ``url + "/v1"`` (OpenAI).
``fake.fail(fault, times=1)``
    Queue a fault for the next ``times`` requests; ``None``: every request from then
    on. Faults are served first in, first out, to requests on any route.
``fake.rate_limit(RateLimit(requests, per=1.0, burst=None))``
    Answer as a rate-limited API: a token bucket per API key (the ``authorization``,
    ``x-api-key`` or ``x-goog-api-key`` header, or Gemini's ``key`` parameter) of ``burst``
    (default ``requests``) tokens, refilled continuously at ``requests`` per ``per``
    seconds. A request that finds its bucket empty gets the `Fault.rate_limited` 429 with
    the wait until the next token: ``retry-after-ms``, ``retry-after`` (whole seconds,
    rounded up), Gemini's RetryInfo. A queued fault comes first and takes no token;
    ``None`` lifts the limit.
``fake.reply(reply)``
    The answer when no fault is pending: `Reply.text(text)` (default
    ``"Hello from FakeProvider."``) or `Reply.tool_call(name, arguments)`.
``fake.requests``
    A copy of the `RecordedRequest` list, in arrival order (the newest
    ``limits.max_recorded``, 10 000 by default): ``method``, ``path``,
    ``query``, ``headers`` (lower-case keys), ``body``, ``json``, ``api``
    (``anthropic``, ``openai_chat``, ``openai_responses``, ``gemini``, another provider's
    such as ``groq_chat``, or ``unknown``: see `RecordedRequest`), ``model``, ``stream``,
    ``fault`` (its name, or ``None`` when the reply was served).
``fake.reset()``
    Drop pending faults and recorded requests; request ids restart at 1.

Routes: ``POST /v1/messages`` (and ``/v1/messages/count_tokens``), ``POST
/v1/chat/completions``, ``POST /v1/responses``, ``POST
/v1beta/models/{model}:generateContent``, ``:streamGenerateContent?alt=sse`` and
``:countTokens`` (``/v1/`` too), ``GET /v1/models``, Amazon Bedrock's ``POST
/model/{modelId}/converse`` and ``/converse-stream`` (AWS event-stream framing; boto3:
``boto3.client("bedrock-runtime", endpoint_url=fake.url, region_name="us-east-1")`` with
any dummy keys); anything else gets an
OpenAI-shaped 404 and is recorded with ``api="unknown"``. Streams (``"stream": true``, or
Gemini's stream method) send each API's real SSE event sequence; replies echo the requested
model. Error bodies have each provider's shape and wording, with ``x-request-id`` (OpenAI)
or ``request-id`` (Anthropic) headers ``req_fake_0001``, ... A body that is not a JSON
object (not JSON, not UTF-8, ``NaN``, nested deeper than Python parses, an array, ...) gets
that API's own 400, unless a fault is queued: the fault comes first. A request without a
body is answered as if it were ``{}``.

===============================  =================================================================
`Fault.rate_limited`             429; ``retry_after`` -> ``retry-after``, ``retry_after_ms`` ->
                                 ``retry-after-ms``; Gemini gets RetryInfo (``retry_delay``, e.g.
                                 ``"38s"``, else derived) and a PerMinute QuotaFailure
`Fault.insufficient_quota`       OpenAI 429 ``insufficient_quota``; Anthropic 400 "credit balance
                                 is too low"; Gemini 429 with a ``PerDay`` QuotaFailure
`Fault.payment_required`         402 (Anthropic ``billing_error``; Gemini BILLING_DISABLED)
`Fault.unauthorized`             401 (Gemini: 400 INVALID_ARGUMENT, ErrorInfo ``API_KEY_INVALID``)
`Fault.forbidden`                403
`Fault.model_not_found(model)`   404 naming ``model`` (default: the requested one)
`Fault.context_too_long`         400 with each provider's context-window wording
`Fault.content_policy`           400 (Gemini: a 200 whose candidate has ``finishReason: SAFETY``)
`Fault.server_error`             500
`Fault.unavailable`              503
`Fault.overloaded`               529 (Anthropic ``overloaded_error``)
`Fault.stream_overloaded`        a 200 stream: one content event, then the API's in-stream error
                                 event; a non-streaming request gets the 529
`Fault.drop`                     read the request, then close without sending a byte
`Fault.cut_stream(after=2)`      a 200 and ``after`` content events, then the connection is cut
                                 mid-body; ``graceful=True`` ends the body cleanly, still with no
                                 finish event; a non-streaming body is cut in half
`Fault.hang(seconds=None)`       read the request, never answer (until ``seconds`` or ``stop()``)
`Fault.status(code, body, hdrs)` any status, a JSON (dict) or text (str) body, extra headers
===============================  =================================================================

``Fault.named(name)`` builds any of these but ``status`` from its name, with default
arguments (what the ``--fault`` flags take).

Load and limits: the fake never fails in a way that was not injected, under the load of a CI
run or the requests of a broken client. A listen backlog of 1024 and a thread per connection
answer hundreds of concurrent clients; keep-alive and pipelined requests are answered in
order. `Limits` bounds what a client can make the server hold::

    FakeProvider(limits=Limits(max_body=1 << 20, read_timeout=5.0, max_recorded=None))

``max_body`` (64 MiB)
    The largest request body read; a larger one gets a 413, whatever its framing (a chunked
    body's chunk-size lines and trailers count too).
``read_timeout`` (30 s)
    How long the server waits for a client's next bytes: then an idle connection is closed
    without a word, and a request left half-sent gets a 408. It bounds each wait, not a whole
    request. A ``hang`` fault is not bound by it.
``max_recorded`` (10 000)
    How many requests ``fake.requests`` keeps, the newest (``None``: every one; ids keep
    counting).

A request the server cannot read gets a plain-text answer, and the connection closes once the
client has read it (the server reads what the client still sends, for up to 2 s, so a client
still sending a refused body sees the answer, not a reset): 400 for malformed framing (a
Content-Length that is not digits, two different ones, both Content-Length and
Transfer-Encoding, a bad chunk-size line, a chunk not followed by CRLF, a body cut short), a
malformed request line or a target with control characters; 413 as above; 414 for a request
line over 64 KiB; 431 for a header line over 64 KiB or over 100 headers; 501 for a method
other than GET, POST, PUT, PATCH and DELETE or a transfer coding other than chunked; 505 for
HTTP/2 and later. Client errors are logged at debug level, never as errors.

Without a server: `sdk_error(sdk, fault, *, stream=False, model="fake-model")` returns
the exception the ``openai``, ``anthropic``, ``google`` or ``bedrock`` (boto3) client raises
for ``fault`` on a non-streaming call (``stream=True``: a streaming call, read to the end).
The SDK's real client sends its request through an in-memory transport (httpx's; botocore's
``before-send`` event for boto3) that answers exactly as `FakeProvider` does (no socket), so
a unit test gets the production exception object, built by the SDK::

    error = sdk_error("anthropic", Fault.overloaded())   # anthropic.OverloadedError, 529
    assert recoverable.classify(error).code == "provider_overloaded"

Agent loops: ``Reply.tool_call(name, arguments, then="final text")`` answers a request
that already carries a tool result (``tool_result``, ``role: tool``,
``function_call_output``, ``functionResponse``) with the text ``then``, so an agent runs
one tool call and finishes (without ``then`` every request gets the tool call).

Real CLIs: `cli_setup(cli, fake, home, *, max_retries=1)` -> `CliSetup` points
``claude``, ``codex`` or ``gemini`` (or several: one setup for a run that falls back along
them) at a running fake: ``env`` (variables to add: a throwaway ``HOME`` = ``home``,
``TMPDIR`` under it, fake keys, the base URL, telemetry/update/plugin traffic off, the CLI's
retries set to ``max_retries``), ``args`` (empty today) and ``files`` (path -> text written
under ``home``: Codex's config.toml with the fake provider and the model, Gemini's
settings.json, which also names the model); ``setup.environ()`` is ``os.environ`` without
proxy and provider variables, plus ``env``. Run the CLI with ``stdin=DEVNULL`` in a new
session (or pass ``env=setup.environ(), inherit_env=False`` to ``agents.run``)::

    with FakeProvider(reply=Reply.tool_call("Bash", {"command": "echo hi"}, then="done")) as fake:
        setup = cli_setup("claude", fake, tmp_path / "home")
        subprocess.run(["claude", "-p", "hi", "--output-format", "stream-json", "--verbose",
                        "--allowedTools", "Bash(echo *)", *setup.args], env=setup.environ(),
                       stdin=subprocess.DEVNULL, start_new_session=True, timeout=60)

From a shell: ``recoverable fake-provider --fault overloaded --times 2`` prints the base
URL and serves until Ctrl-C or SIGTERM. Each ``--fault`` fails the next ``--times`` requests
in turn (0, the default: every request from then on, so a later ``--fault`` is never
reached), as ``recoverable run --fake FAULT --times N`` does.
"""

from __future__ import annotations

from .._core.exports import Face

# Not `typing.TYPE_CHECKING`: `recoverable run --fake` imports this face.
TYPE_CHECKING = False

__all__ = [
    "CliSetup",
    "FakeProvider",
    "Fault",
    "Limits",
    "RateLimit",
    "RecordedRequest",
    "Reply",
    "cli_setup",
    "sdk_error",
    "set_testing",
]

# public name -> the module that defines it (loaded on first use: `set_testing` loads no server)
_FACE = Face(
    __name__,
    {
        "CliSetup": "recoverable.testing._cli_setup",
        "cli_setup": "recoverable.testing._cli_setup",
        "Fault": "recoverable.testing._faults",
        "Reply": "recoverable.testing._faults",
        "Limits": "recoverable.testing._limits",
        "RateLimit": "recoverable.testing._rate_limit",
        "sdk_error": "recoverable.testing._sdk_errors",
        "FakeProvider": "recoverable.testing._server",
        "RecordedRequest": "recoverable.testing._server",
        "set_testing": "recoverable._retry",
    },
)

if TYPE_CHECKING:
    from .._retry import set_testing
    from ._cli_setup import CliSetup, cli_setup
    from ._faults import Fault, Reply
    from ._limits import Limits
    from ._rate_limit import RateLimit
    from ._sdk_errors import sdk_error
    from ._server import FakeProvider, RecordedRequest


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()
