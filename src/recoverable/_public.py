"""What a person may read of a detail: only sentences from this process's registry.

Every public writer (HTTP bodies, stream chunks, `Done` events, envelopes for a person, log
lines) takes its sentence from here, never from the detail's own `user_message` as it arrived:
a code registered here reads its row's sentence; a code this process does not know (a peer's,
a forged one) reads its category's generic sentence (principle 6).
"""

from __future__ import annotations

from ._codes import category_sentence, codes
from ._detail import ErrorDetail

__all__ = ["public_sentence"]


def public_sentence(detail: ErrorDetail) -> str:
    """The sentence safe to show a person for `detail`: its code's row, else its category's."""
    row = codes.get(detail.code)
    return row.user_message if row is not None else category_sentence(detail.category)
