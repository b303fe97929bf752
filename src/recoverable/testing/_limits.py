"""What FakeProvider accepts from its clients and how long it waits for them: its limits."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BACKLOG", "Limits"]

# Connections the kernel queues while the server thread accepts (capped by the OS, e.g.
# net.core.somaxconn on Linux). socketserver's default of 5 resets a burst of clients.
BACKLOG = 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """FakeProvider's limits: `FakeProvider(limits=Limits(max_body=1 << 20))`."""

    max_body: int = 64 * 1024 * 1024
    """The largest request body read, in bytes (64 MiB); a larger one gets a 413. A chunked
    body counts as sent: its chunk-size lines and trailers count too."""
    read_timeout: float = 30.0
    """Seconds the server waits for a client's next bytes. Then an idle connection is closed
    without a word, and a request left half-sent gets a 408. It bounds each wait, not a whole
    request. `Fault.hang` is not bound by it: it holds until its seconds, `stop()`, or the
    client leaves."""
    max_recorded: int | None = 10_000
    """How many requests `fake.requests` keeps, the newest (0: none; None: every one).
    Request ids keep counting past it."""

    def __post_init__(self) -> None:
        """Refuse limits that cannot work."""
        if self.max_body < 0:
            raise ValueError(f"max_body must be >= 0, got {self.max_body}")
        if not self.read_timeout > 0:
            raise ValueError(f"read_timeout must be > 0, got {self.read_timeout}")
        if self.max_recorded is not None and self.max_recorded < 0:
            raise ValueError(f"max_recorded must be >= 0 or None, got {self.max_recorded}")
