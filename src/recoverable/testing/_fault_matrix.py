"""The fault matrix: what each surface reports for each FakeProvider fault, as one table.

One fault, one code (DESIGN principle 11): the same failure gets the same code and
`retryable` whichever surface carries it, as far as the surface's evidence allows. This table
says, for every fault of `recoverable.testing.Fault` and every surface, the code and
`retryable` we give; where a surface hides the distinction (a CLI that drops an in-stream
error, an answer that never came), the cell says why and quotes what the surface showed.
`tests/testing/test_fault_matrix.py` drives every cell for real and asserts it;
`recoverable codes --markdown` prints it.
"""

from __future__ import annotations

from typing import NamedTuple

from .._core.codes import codes

__all__ = ["FAULTS", "SURFACES", "Cell", "FaultRow", "cell", "render_matrix"]

SURFACES: tuple[str, ...] = (
    "claude", "codex", "gemini",
    "openai", "openai stream", "azure openai", "azure openai stream",
    "anthropic", "anthropic stream",
    "google-genai", "google-genai stream",
    "groq", "groq stream", "together", "together stream",
    "fireworks", "fireworks stream", "cerebras", "cerebras stream",
    "mistralai", "mistralai stream", "ollama", "ollama stream", "cohere", "cohere stream",
    "google-api-core", "huggingface-hub", "huggingface-hub stream", "bedrock", "bedrock stream",
    "openrouter", "openrouter stream", "deepseek", "deepseek stream",
    "vllm", "vllm stream", "lm studio", "lm studio stream",
    "http openai", "http anthropic", "http gemini",
)  # fmt: skip
"""`agents.run` with each real CLI; each SDK's client, non-streaming and streaming (openai's
`AzureOpenAI` on a deployment's path, in Azure's words; groq,
together, fireworks-ai, cerebras-cloud-sdk and mistralai speak OpenAI's Chat Completions, Groq
under its own path and wording; google-api-core: a Google Cloud REST client's way, google-auth's
session and `from_http_response`, on Gemini's path; huggingface-hub's `InferenceClient` on
the OpenAI-compatible route by `base_url`; bedrock: boto3's `bedrock-runtime` Converse and
ConverseStream; OpenRouter, DeepSeek, vLLM and LM Studio: the openai SDK with a `base_url`,
each answering in its own words); the raw HTTP answer of each API, read by `from_http` (by
`classify_response` when it is a 200)."""


class Cell(NamedTuple):
    """What one surface reports for one fault."""

    code: str | None
    """The code; None when there is nothing to classify (no HTTP answer came)."""
    retryable: bool | None
    """`retryable` of the detail (None with no code)."""
    why: str = ""
    """Why this cell is what it is, when that is not plain: what the surface hides or shows."""
    shows: str = ""
    """What the surface printed or raised that this cell rests on (the evidence, quoted)."""


class FaultRow(NamedTuple):
    """One fault: what FakeProvider sends, its one code, and the cells that differ or need
    a word."""

    fault: str
    sends: str
    code: str
    cells: dict[str, Cell] = {}  # noqa: RUF012 -- a NamedTuple default, never mutated


_NO_ANSWER = Cell(None, None, "no HTTP answer came: the client's exception is classified",
                  "no HTTP answer")  # fmt: skip
_OUR_IDLE_DEADLINE = Cell(
    "run_timeout", True,
    "the CLI waits on the silent request for minutes; our idle deadline stops it (retryable: "
    "no tool had started)", "idle deadline",
)  # fmt: skip
_SAFETY_200 = Cell("provider_content_filtered", False,
                   "a 200 whose candidate finished for SAFETY: nothing is raised; "
                   "classify_response reads it", "SAFETY")  # fmt: skip
_IN_STREAM = Cell(
    "provider_overloaded",
    True,
    "the 200 stream's error event, read by from_http",
    "in-stream error event",
)
_CUT_BYTES = Cell(
    "provider_bad_response",
    True,
    "what the bytes say: a 200 whose stream stops before its finish event, an "
    "incomplete answer (the cut itself is the HTTP client's exception)",
    "stopped before its finish event",
)

# Ollama's errors are a sentence and a status, and a local Ollama has no billing or filter.
_OLLAMA_429 = Cell(
    "provider_rate_limited",
    True,
    "Ollama's 429 is a sentence and a status, no billing code (a local Ollama "
    "has no billing): read as a rate limit",
    "status code: 429",
)
_OLLAMA_400 = Cell(
    "provider_invalid_request",
    False,
    "Ollama has no content filter: its 400 says only that the request was refused",
    "status code: 400",
)

_GUARDRAIL_200 = Cell(
    "provider_content_filtered",
    False,
    "Bedrock's guardrail answers a 200 whose stopReason is guardrail_intervened: nothing is "
    "raised; classify_response reads it",
    "guardrail_intervened",
)

# A local LM Studio has no billing or filter: the reason phrase and the status are all it says.
_LM_STUDIO_429 = Cell(
    "provider_rate_limited",
    True,
    "LM Studio has no billing: its 429 names nothing else, read as a rate limit",
    "Error code: 429",
)
_LM_STUDIO_400 = Cell(
    "provider_invalid_request",
    False,
    "LM Studio has no content filter: its 400 says only that the request was refused",
    "Error code: 400",
)

_COHERE_400 = Cell(
    "provider_invalid_request",
    False,
    "Cohere names no content-filter code: its 400 is read by the status",
    "status_code: 400",
)

FAULTS: tuple[FaultRow, ...] = (
    FaultRow("rate_limited", "429 with retry-after (Gemini: RESOURCE_EXHAUSTED, RetryInfo, a "
             "PerMinute quota)", "provider_rate_limited"),
    FaultRow("insufficient_quota", "OpenAI 429 insufficient_quota, Anthropic 400 credit "
             "balance, Gemini 429 with a PerDay quota", "provider_quota_exceeded", {
        "ollama": _OLLAMA_429, "ollama stream": _OLLAMA_429,
        "lm studio": _LM_STUDIO_429, "lm studio stream": _LM_STUDIO_429,
    }),
    FaultRow("payment_required", "402 (Anthropic billing_error, Gemini BILLING_DISABLED)",
             "provider_quota_exceeded"),
    FaultRow("unauthorized", "401 (Gemini: 400 API_KEY_INVALID)", "provider_auth_failed"),
    FaultRow("forbidden", "403", "provider_permission_denied", {
        "claude": Cell("provider_permission_denied", False,
                       "Claude words a 401 and a 403 alike (its literal authentication_failed); "
                       "the status after 'API Error:' tells them apart",
                       "Failed to authenticate. API Error: 403"),
    }),
    FaultRow("model_not_found", "404 naming the model", "provider_model_not_found"),
    FaultRow("context_too_long", "400 in each provider's context-window words",
             "provider_context_too_long"),
    FaultRow("content_policy", "400 (Gemini: a 200 whose candidate finished for SAFETY)",
             "provider_content_filtered", {
        "ollama": _OLLAMA_400, "ollama stream": _OLLAMA_400,
        "cohere": _COHERE_400, "cohere stream": _COHERE_400,
        "lm studio": _LM_STUDIO_400, "lm studio stream": _LM_STUDIO_400,
        "claude": Cell("provider_content_filtered", False,
                       "the provider's words after 'API Error: 400' (Claude's literal says "
                       "invalid_request)", "Output blocked by content filtering policy"),
        "gemini": Cell("provider_content_filtered", False, "Gemini's own sentence for SAFETY",
                       "blocked due to safety settings"),
        "google-genai": _SAFETY_200,
        "google-genai stream": _SAFETY_200,
        "http gemini": _SAFETY_200,
        "bedrock": _GUARDRAIL_200, "bedrock stream": _GUARDRAIL_200,
    }),
    FaultRow("server_error", "500", "provider_server_error"),
    FaultRow("unavailable", "503", "provider_overloaded"),
    FaultRow("overloaded", "529 (Anthropic overloaded_error)", "provider_overloaded"),
    FaultRow("stream_overloaded", "a 200 stream, one content event, then the API's in-stream "
             "error event; a non-streaming request gets the 529", "provider_overloaded", {
        "claude": Cell("provider_overloaded", True,
                       "Claude asks again without streaming (its fallback) and gets the 529",
                       "API Error: 529 Overloaded"),
        "codex": Cell("provider_bad_response", True,
                      "Codex drops the in-stream error event and reports only that the stream "
                      "ended early: overloaded or cut cannot be told apart, both retryable",
                      "stream closed before response.completed"),
        "gemini": Cell("provider_bad_response", True,
                       "Gemini drops the in-stream error chunk and reports only the missing "
                       "finish reason: both retryable", "Model stream ended without a finish "
                       "reason"),
        "openai stream": Cell("provider_overloaded", True,
                              "the in-stream error's type is the generic server_error; its "
                              "message is OpenAI's 503 wording",
                              "APIError: The server is overloaded"),
        "anthropic stream": Cell("provider_overloaded", True,
                                 "APIStatusError with status 200: its overloaded_error type "
                                 "decides", "overloaded_error"),
        "http openai": _IN_STREAM, "http anthropic": _IN_STREAM, "http gemini": _IN_STREAM,
        "cohere stream": Cell(None, None,
                              "cohere's stream reader has no error event: it hands the event "
                              "over as a stream event of another type, nothing is raised",
                              "answered normally"),
    }),
    FaultRow("drop", "the request is read, then the connection closes without a byte",
             "provider_connection_lost", {
        "http openai": _NO_ANSWER, "http anthropic": _NO_ANSWER, "http gemini": _NO_ANSWER,
    }),
    FaultRow("cut_stream", "a 200 and two content events, then the connection is cut mid-body "
             "(a non-streaming body: cut in half)", "provider_connection_lost", {
        "gemini": Cell("provider_bad_response", True,
                       "Gemini reads a cut stream as one without a finish reason: both "
                       "retryable", "Model stream ended without a finish reason"),
        "http openai": _CUT_BYTES, "http anthropic": _CUT_BYTES, "http gemini": _CUT_BYTES,
        "bedrock": Cell(None, None,
                        "botocore reads a JSON body cut in half as an answer with no fields: "
                        "nothing is raised and the dict holds only ResponseMetadata",
                        "answered normally"),
        "bedrock stream": Cell("provider_connection_lost", True,
                               "botocore's event-stream reader lets urllib3's ProtocolError "
                               "through unwrapped; its frames say botocore raised it",
                               "urllib3.exceptions.ProtocolError"),
    }),
    FaultRow("hang", "the request is read and never answered", "provider_timeout", {
        "claude": _OUR_IDLE_DEADLINE, "codex": _OUR_IDLE_DEADLINE, "gemini": _OUR_IDLE_DEADLINE,
        "http openai": _NO_ANSWER, "http anthropic": _NO_ANSWER, "http gemini": _NO_ANSWER,
    }),
)  # fmt: skip


def cell(row: FaultRow, surface: str) -> Cell:
    """The cell of `row` for `surface`: its own entry, else the fault's one code."""
    found = row.cells.get(surface)
    if found is not None:
        return found
    return Cell(row.code, codes[row.code].retryable)


def _cell_text(row: FaultRow, found: Cell) -> str:
    if found.code is None:
        return "—"
    if found.code == row.code and found.retryable == codes[row.code].retryable:
        return "✓"  # the fault's one code
    return f"`{found.code}`" + (" (retry)" if found.retryable else " (no retry)")


def render_matrix() -> str:
    """The matrix as Markdown: a row per fault (its one code, and ✓ where a surface gives
    it), a column per surface, the notes below."""
    head = ["fault", "code", "retry", *SURFACES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes: list[str] = []
    for row in FAULTS:
        retry = "yes" if codes[row.code].retryable else "no"
        cells = [f"`{row.fault}`", f"`{row.code}`", retry]
        for surface in SURFACES:
            found = cell(row, surface)
            text = _cell_text(row, found)
            if found.why:
                note = f"{found.why} (shows: {found.shows!r})" if found.shows else found.why
                if note not in notes:
                    notes.append(note)
                text += f" [{notes.index(note) + 1}]"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "✓: the fault's code and retry; —: no HTTP answer to read.", ""]
    lines += ["What FakeProvider sends:", ""]
    lines += [f"- `{row.fault}`: {row.sends}" for row in FAULTS]
    lines += ["", "Notes:", ""]
    lines += [f"{number}. {note}" for number, note in enumerate(notes, 1)]
    return "\n".join(lines)
