"""What a synchronous caller may hand us to cancel work from another thread."""

from __future__ import annotations

from typing import Protocol

__all__ = ["CancelSignal"]


class CancelSignal(Protocol):
    """Anything with `is_set()`, such as a `threading.Event`: set means stop."""

    def is_set(self) -> bool:
        """Whether the caller asked to stop."""
        ...
