"""Credentials out of every text recoverable keeps or writes: `scrub` and your own patterns.

    from recoverable.secrets import add_secret_pattern, scrub

    scrub("Authorization: Bearer sk-proj-abc123def456")   # 'Authorization: [REDACTED]'
    add_secret_pattern(r"acme_[A-Za-z0-9]{32}")            # your own token shape, from now on

Every detail's message, cause and details, every event and every line logged pass through the
same scrubber.
"""

from ._core.exports import Face

TYPE_CHECKING = False

__all__ = ["REDACTED", "add_secret_pattern", "scrub"]

_FACE = Face(
    __name__,
    {
        "REDACTED": "recoverable._core.secrets",
        "add_secret_pattern": "recoverable._core.secrets",
        "scrub": "recoverable._core.secrets",
    },
)

if TYPE_CHECKING:
    from ._core.secrets import REDACTED, add_secret_pattern, scrub


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()
