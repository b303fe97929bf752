"""The scrubber's fast forms replace exactly what its first forms replaced.

The regexes were rewritten to start at a literal (so the regex engine can skip to it) and the
scrubber screens clean text before any regex runs. Whatever the first version of the scrubber
redacted, this one redacts the same way: `_reference_scrub` below is that first version,
kept verbatim, and hypothesis compares the two over texts built from credential shapes,
their names in every case, separators and noise.
"""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from recoverable._core.secrets import REDACTED, scrub

# -- the first version, verbatim (its table and the order it ran the regexes in) ------------

_TOKEN = r"A-Za-z0-9_\-"
_LABELS = (
    r"api[_-]?key|apikey|key|token|access[_-]?token|refresh[_-]?token|id[_-]?token"
    r"|auth[_-]?token|x-api-key|x-goog-api-key"
    r"|client[_-]?secret|secret|password|passwd|pwd|signature|sig|x-amz-security-token"
)
_KEY = (rf"(?<![A-Za-z])(sk-)[{_TOKEN}]{{16,}}", 0)
_GOOGLE = (rf"(?<![A-Za-z])(AIza)[{_TOKEN}]{{30,}}", 0)
_AWS = (r"(?<![A-Za-z])(AKIA|ASIA)[A-Z0-9]{16}\b", 0)
_GITHUB = (
    r"(?<![A-Za-z])(gh[pousr]_)[A-Za-z0-9]{30,}|(?<![A-Za-z])(github_pat_)[A-Za-z0-9_]{30,}",
    0,
)
_JWT = (rf"(?<![A-Za-z])(eyJ)[{_TOKEN}]{{6,}}\.[{_TOKEN}]{{6,}}\.[{_TOKEN}]*", 0)
_SCHEME = (r"(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/\-]{6,}=*", re.IGNORECASE)
_SPACE = r"(?:\s|%20)"
_HEADER = (
    rf"""((?:proxy-)?authorization|x-(?:goog-)?api-key)(["']?{_SPACE}*[:=]{_SPACE}*["']?)"""
    rf"""(?:(?:bearer|basic|token){_SPACE}+)?[^\s"',;}}]+""",
    re.IGNORECASE,
)
_AWS_SECRET = (
    r"((?i:secret_?access_?key|session_?token)(?:[\"']|%22)?(?:\s|%20)*(?:[:=]|%3[AaDd])"
    r"(?:\s|%20)*(?:[\"']|%22)?)[A-Za-z0-9/+=%]{16,}",
    0,
)
_URL_PASSWORD = (r"(://[^/\s:@]+:)[^/\s@]+(?=@)", 0)
_PARAMETER = (rf"((?<![A-Za-z_])(?:{_LABELS})=)[^&\s#\"',;}}]+", re.IGNORECASE)
_FIRST_TABLE = (
    ("-", "sk-", _KEY), ("-", "-key", _HEADER), ("I", "AIza", _GOOGLE), ("I", "AKIA", _AWS),
    ("I", "ASIA", _AWS), ("_", "ecret_access_key", _AWS_SECRET),
    ("_", "ECRET_ACCESS_KEY", _AWS_SECRET), ("_", "ession_token", _AWS_SECRET),
    ("_", "ESSION_TOKEN", _AWS_SECRET), ("K", "ecretAccessKey", _AWS_SECRET),
    ("T", "essionToken", _AWS_SECRET), ("_", "gh", _GITHUB), ("_", "github_pat_", _GITHUB),
    ("J", "eyJ", _JWT), ("B", "Bearer", _SCHEME), ("B", "BEARER", _SCHEME),
    ("B", "Basic", _SCHEME), ("B", "BASIC", _SCHEME), ("z", "uthorization", _HEADER),
    ("Z", "UTHORIZATION", _HEADER), ("K", "-Key", _HEADER), ("K", "-KEY", _HEADER),
    ("@", "://", _URL_PASSWORD), ("=", "=", _PARAMETER),
)  # fmt: skip


def _redact(match: re.Match[str]) -> str:
    return "".join(part for part in match.groups() if part) + REDACTED


def _reference_scrub(text: str) -> str:
    groups: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for gate, word, regex in _FIRST_TABLE:
        groups.setdefault(gate, []).append((word, re.compile(*regex)))
    for gate, checks in groups.items():
        if gate in text:
            for word, pattern in checks:
                if word in text:
                    text = pattern.sub(_redact, text)
    return text


# -- texts made of what the regexes look for -------------------------------------------------

_PIECES = [
    "sk-", "sk-proj-", "sk-ant-api03-", "AIza", "AKIA", "ASIA", "ghp_", "gho_", "github_pat_",
    "eyJ", "eyJhbGciOiJIUzI1NiJ9.", "Bearer", "BEARER", "bearer", "Basic", "basic", "BaSiC",
    "Authorization", "authorization", "AUTHORIZATION", "AuThOrIzAtIoN", "Proxy-Authorization",
    "x-api-key", "X-Api-Key", "X-API-KEY", "x-goog-api-key", "X-Goog-Api-Key", "-key", "-Key",
    "api-keys", "://", "https://", "user:pass@", "@", ":", "=", "key", "KEY", "token", "Token",
    "api_key", "API-KEY", "apikey", "access_token", "refresh-token", "idtoken", "auth_token",
    "client_secret", "secret", "password", "passwd", "pwd", "signature", "sig",
    "x-amz-security-token", "aws_secret_access_key", "SecretAccessKey", "session_token",
    "SessionToken", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "monkey",
    "_", "-", "%20", " ", "\t", "\n", "'", '"', ",", ";",
    "}", "&", "#", "/", ".", "0123456789", "ABCDEFGHIJKLMNOP", "abcdefghijklmnopqrstuvwxyz",
    "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz", "\u212a", "\u017f", "é", "ü", "\u00a0",
]  # fmt: skip
_texts = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=6)), max_size=40).map(
    "".join
)


@settings(max_examples=1500, deadline=None)
@given(_texts)
@example("Authorization: x-api-key=abc and x-api-key: Authorization: abc")
@example("token=key=abc&x-api-key=1 AKIA1ASIAABCDEFGHIJKLMNOPQ api_key=v")
@example("ASIA1AKIAABCDEFGHIJKLMNOP1234 bearer abcdefghij Basic x")
@example("x-api-\u212aey: secret-value and pa\u017f\u017fword=hunter2 Basic")
def test_the_scrubber_replaces_what_its_first_version_replaced(text: str) -> None:
    assert scrub(text) == _reference_scrub(text)


@settings(max_examples=500, deadline=None)
@given(_texts)
def test_text_the_scrubber_leaves_alone_is_returned_as_is(text: str) -> None:
    scrubbed = scrub(text)
    assert (scrubbed is text) == (scrubbed == text)


def test_a_text_seen_before_is_scrubbed_as_the_first_time() -> None:
    text = "retry with token=ephemeral-token-value now"
    first = scrub(text)
    assert scrub(text) == first == "retry with token=[REDACTED] now"
    clean = "Overloaded, seen twice"
    assert scrub(clean) is clean
    assert scrub(clean) is clean  # remembered as left alone: the same object comes back


def test_a_pattern_added_later_applies_to_texts_seen_before() -> None:
    from recoverable._core.secrets import add_secret_pattern

    text = "ticket zq-778899 rejected"
    assert scrub(text) is text
    add_secret_pattern(r"(zq-)[0-9]{6}")
    assert scrub(text) == "ticket zq-[REDACTED] rejected"


class _Lying(str):
    """A str whose == says yes to anything: it must not poison what the scrubber remembers."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("sk-proj-" + "a" * 30)


def test_a_str_subclass_is_never_remembered() -> None:
    liar = _Lying("nothing here")
    assert scrub(liar) == "nothing here"
    assert scrub("sk-proj-" + "a" * 30) == "sk-[REDACTED]"
