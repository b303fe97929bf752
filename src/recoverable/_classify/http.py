"""Until the agents package imports `http_answers` (the house refactor)."""

from .http_answers import from_http, message_code

__all__ = ["from_http", "message_code"]
