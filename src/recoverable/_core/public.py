"""What a person may read of a detail: only codes, numbers and sentences from this registry.

Every public writer (the wire's HTTP bodies, stream chunks, `Done` events and AI SDK stream;
any envelope or line meant for a person) reads a detail through `public_view`, never through
its fields as they arrived: a detail can be built without checks (`ErrorDetail(...)`
directly), read from a peer, or carry a code this process does not know, and none of that
may put words before a person that this process did not write (principle 6). The view is
built from the registry alone:

    field          what a person reads
    code           a code registered here; else `unknown` (a peer's code is not ours: in
                   64 lower_snake characters it can still spell a sentence)
    category       the registered code's; a peer's when it is one of ours; else `unknown`
    user_message   the code's row sentence, else its category's generic sentence
    fix_required   the row's sentence when the detail needs a fix; FIX_REQUIRED_SENTENCE when
                   it needs one the row does not state (the detail's own words are the
                   operator's, never the person's); None when nothing must change
    retryable,     the detail's, typed (a wait only when retryable, finite and capped)
    retry_after_ms
    message        only when a writer exposes it, for a registered code that is not
                   `unknown` or `internal_error`, scrubbed again

Readers go the other way: `own_sentences` makes a detail read from a peer carry this
registry's sentences, the peer's own words kept (scrubbed) in `details` as developer text.
"""

from __future__ import annotations

from dataclasses import dataclass

from .categories import CATEGORY_SENTENCES, category_sentence
from .codes import codes
from .detail import MAX_CAUSE_DEPTH, ErrorDetail, copy_with
from .untrusted import clean_hint_ms, clean_text

__all__ = [
    "DEFAULT_WAIT_MS",
    "FIX_REQUIRED_SENTENCE",
    "PEER_CATEGORY",
    "PEER_USER_MESSAGE",
    "PublicDetail",
    "own_sentences",
    "public_code",
    "public_sentence",
    "public_view",
    "stated_wait_ms",
]

DEFAULT_WAIT_MS = 1000
"""The wait before reissuing a retryable failure that carries no `retry_after_ms`: the
envelope's reading rule (1 s), for every code, RATE_LIMITED included (see README,
"Decisions": a producer that wants 60 s says so in `retry_after_ms`)."""
FIX_REQUIRED_SENTENCE = "Something must be changed before this can work."
"""What a person reads as `fix_required` when a detail needs a fix its row does not state."""
PEER_USER_MESSAGE = "peer_user_message"
"""The `details` key where `own_sentences` keeps a peer's own sentence (developer text)."""
PEER_CATEGORY = "peer_category"
"""The `details` key where `own_sentences` keeps a peer's category that is not one of ours."""

_NEVER_EXPOSED = frozenset({"unknown", "internal_error"})  # their text is any exception's
_MAX_PEER_SENTENCE = 500  # as `from_dict` keeps a peer's sentence
_MAX_NAME = 100  # as `from_dict` keeps a peer's category


@dataclass(frozen=True, slots=True)
class PublicDetail:
    """A detail as a person may read it: codes, numbers and this registry's sentences."""

    code: str
    """The code (see the module's table): what a client branches on."""
    category: str
    """The code's family, as this registry names it."""
    retryable: bool
    """Whether the identical call may succeed."""
    retry_after_ms: int | None
    """The detail's wait hint (finite, capped); None when not retryable or none was given."""
    fix_required: str | None
    """A registry sentence saying that something must change first; None when nothing must."""
    user_message: str
    """The sentence for a person: the code's row, else its category's."""
    http_status: int
    """The status our own server answers with for `code`."""
    message: str | None = None
    """The developer text, scrubbed, only when a writer exposed it (never for `unknown`)."""


def public_code(code: object) -> str:
    """`code` as a person may read it: a code registered here, else `unknown`."""
    return code if isinstance(code, str) and codes.get(code) is not None else "unknown"


def _public_category(code: object, category: object) -> str:
    """The category of `code` (as it arrived) a person may read."""
    row = codes.get(code) if isinstance(code, str) else None
    if row is not None:
        return row.category
    return category if isinstance(category, str) and category in CATEGORY_SENTENCES else "unknown"


def _sentence(code: object, category: str) -> str:
    row = codes.get(code) if isinstance(code, str) else None
    return row.user_message if row is not None else category_sentence(category)


def public_sentence(detail: ErrorDetail) -> str:
    """The sentence safe to show a person for `detail`: its code's row, else its category's."""
    return _sentence(detail.code, _public_category(detail.code, detail.category))


def public_view(detail: ErrorDetail, *, expose_message: bool = False) -> PublicDetail:
    """`detail` as a person may read it (see the module's table); `expose_message` adds the
    developer `message`, scrubbed, for a registered code other than `unknown` and
    `internal_error`."""
    code = public_code(detail.code)
    category = _public_category(detail.code, detail.category)
    row = codes.get(code) if code == detail.code else None
    retryable = detail.retryable is True
    fix_required = None
    if not retryable and isinstance(detail.fix_required, str) and detail.fix_required:
        stated = row.fix_required if row is not None else None
        fix_required = stated or FIX_REQUIRED_SENTENCE
    message = None
    if expose_message and row is not None and code not in _NEVER_EXPOSED:
        message = clean_text(detail.message) if isinstance(detail.message, str) else ""
    return PublicDetail(
        code=code,
        category=category,
        retryable=retryable,
        retry_after_ms=clean_hint_ms(detail.retry_after_ms) if retryable else None,
        fix_required=fix_required,
        user_message=_sentence(detail.code, category),
        http_status=codes.resolve(code).http_status,
        message=message,
    )


def own_sentences(detail: ErrorDetail) -> ErrorDetail:
    """A detail read from a peer, with this registry's words in every link of its chain: a
    sentence this process did not write is replaced by `public_sentence` and kept, scrubbed,
    as developer text in `details["peer_user_message"]`; the category of a code not
    registered here, when it is not one of ours, goes to `details["peer_category"]`
    (`unknown` in its place). The detail itself when it says only our words already."""
    chain = [detail]
    while isinstance(chain[-1].cause, ErrorDetail) and len(chain) < MAX_CAUSE_DEPTH:
        chain.append(chain[-1].cause)
    rebuilt: ErrorDetail | str | None = chain[-1].cause
    for link in reversed(chain):
        mended = _own_link(link)
        if mended is not link or rebuilt is not link.cause:
            mended = copy_with(mended, cause=rebuilt)
        rebuilt = mended
    assert isinstance(rebuilt, ErrorDetail)
    return rebuilt


def _own_link(detail: ErrorDetail) -> ErrorDetail:
    category = _public_category(detail.code, detail.category)
    sentence = _sentence(detail.code, category)
    if category == detail.category and sentence == detail.user_message:
        return detail
    said, named = detail.user_message, detail.category
    extra: dict[str, str] = {}
    if sentence != said and isinstance(said, str) and said:
        extra[PEER_USER_MESSAGE] = clean_text(said, _MAX_PEER_SENTENCE)
    if category != named and _foreign(detail.code) and isinstance(named, str) and named:
        extra[PEER_CATEGORY] = clean_text(named, _MAX_NAME)
    details = {**detail.details, **extra} if isinstance(detail.details, dict) else extra
    return copy_with(detail, category=category, user_message=sentence, details=details)


def _foreign(code: object) -> bool:
    return not (isinstance(code, str) and codes.get(code) is not None)


def stated_wait_ms(detail: ErrorDetail | PublicDetail) -> int | None:
    """The wait a public answer states: the detail's (finite, capped), or 1 s when a
    retryable detail gives none (the envelope's reading rule, written out so every reader
    waits the same); None when not retryable."""
    if detail.retryable is not True:
        return None
    wait = clean_hint_ms(detail.retry_after_ms)
    return DEFAULT_WAIT_MS if wait is None else wait
