"""Hostile CLI output: nothing a CLI prints makes a run raise.

No process is started here.
"""

from __future__ import annotations

from recoverable._classify.http_answers import from_http

DEEP = "[" * 100_000  # RecursionError inside json


def test_from_http_reads_a_body_nested_past_the_recursion_limit_as_text() -> None:
    # The classifier the three parsers pass CLI text to: it promised never to raise.
    assert from_http(500, body=DEEP).code == "provider_server_error"
    assert from_http(None, body='{"error":' + DEEP).code == "provider_bad_response"
