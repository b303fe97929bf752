"""Classifying HTTP answers: statuses, Retry-After, provider error bodies, our own bodies.

Decisions are small tables read in a fixed order, structured fields first: body `code` /
`error_code` (OpenAI, Anthropic) and Google `status` / `ErrorInfo.reason` / `QuotaFailure`,
then the body `type`, then anchored phrases of the upstream message for the few failures that
only the text names (context window, credit balance, safety system), and only then the HTTP
status. Quota is never a rate limit.

The modules, each importing only those above it: `raw` (a body as text and JSON), `messages`
(the phrases), `compatible` (what the services behind the openai SDK's `base_url` add),
`bodies` (`ProviderBody`), `retry_after`, `answers` (the tables and `from_http`), `remembered`
(a decision kept per status and body), `ours` (our own answers read back), `clients` (HTTP
client libraries' status errors).
"""

from .answers import (
    decide,
    from_http,
    generic_from_status,
    parsed_http,
    provider_detail,
    status_attribute,
)
from .bodies import ProviderBody
from .messages import MESSAGE_PHRASES, message_code
from .raw import parse_body
from .retry_after import (
    header_value,
    hint_ms,
    httpx_header_map,
    httpx_lacks,
    latin1,
    retry_after_ms,
)

__all__ = [
    "MESSAGE_PHRASES",
    "ProviderBody",
    "decide",
    "from_http",
    "generic_from_status",
    "header_value",
    "hint_ms",
    "httpx_header_map",
    "httpx_lacks",
    "latin1",
    "message_code",
    "parse_body",
    "parsed_http",
    "provider_detail",
    "retry_after_ms",
    "status_attribute",
]
