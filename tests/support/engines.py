"""What the engines' test apps (Celery, DBOS, Temporal) share."""

from __future__ import annotations


class ReplyNotUnderstood(Exception):
    """A failure recoverable cannot classify: `unknown`."""
