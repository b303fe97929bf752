"""Credentials scrubbed out of developer text before a detail stores it: one scrubber.

Error text often quotes what it was given: an SDK message echoes a key, a URL carries
`?key=...`, a CLI's stderr prints its environment. Every place where text enters the library
(classify's messages and bodies, `from_http`, the runners' stderr and error text, payloads
read from elsewhere) passes it through `scrub`, so no detail, `str()` or JSON output carries
a credential. The model's answer text is not scrubbed: it is not error text.

Each kind of credential is a regex, run only on texts that hold the words it needs: a
membership test is what keeps `classify` fast.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

__all__ = ["REDACTED", "add_secret_pattern", "scrub"]

REDACTED = "[REDACTED]"
"""What a credential is replaced with (after the part of it that names what it was)."""

_TOKEN = r"A-Za-z0-9_\-"
# A key may follow any non-letter: a space, a quote, "=", or the "%20" of a URL-encoded space.
# Names whose value is a credential, in a query string, a header or `name=value` text.
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
_SPACE = r"(?:\s|%20)"  # a space, or a URL-encoded one
_HEADER = (
    rf"""((?:proxy-)?authorization|x-(?:goog-)?api-key)(["']?{_SPACE}*[:=]{_SPACE}*["']?)"""
    rf"""(?:(?:bearer|basic|token){_SPACE}+)?[^\s"',;}}]+""",
    re.IGNORECASE,
)
_URL_PASSWORD = (r"(://[^/\s:@]+:)[^/\s@]+(?=@)", 0)
_PARAMETER = (rf"((?<![A-Za-z_])(?:{_LABELS})=)[^&\s#\"',;}}]+", re.IGNORECASE)

# A regex runs on a text only when the text holds its gate (a character, most of them ones
# ordinary error text seldom holds: a memchr) and then its word (a substring search):
# running the regexes themselves on every text would cost ten times as much. gate, word,
# regex; compiled at first use, not at import.
_BUILT_IN = (
    ("-", "sk-", _KEY),                      # OpenAI and Anthropic keys
    ("-", "-key", _HEADER),                  # x-api-key, x-goog-api-key
    ("I", "AIza", _GOOGLE),                  # Google API keys
    ("I", "AKIA", _AWS),                     # AWS access key ids
    ("I", "ASIA", _AWS),
    ("_", "gh", _GITHUB),                    # GitHub tokens
    ("_", "github_pat_", _GITHUB),
    ("J", "eyJ", _JWT),                      # JSON Web Tokens
    ("B", "Bearer", _SCHEME),                # bearer and basic credentials
    ("B", "BEARER", _SCHEME),
    ("B", "Basic", _SCHEME),
    ("B", "BASIC", _SCHEME),
    ("z", "uthorization", _HEADER),          # Authorization (and X-Api-Key below)
    ("Z", "UTHORIZATION", _HEADER),
    ("K", "-Key", _HEADER),
    ("K", "-KEY", _HEADER),
    ("@", "://", _URL_PASSWORD),             # user:password@ in URLs
    ("=", "=", _PARAMETER),                  # key=..., token=..., password=...
)  # fmt: skip

_lock = threading.Lock()
_added: tuple[re.Pattern[str], ...] = ()
_scrub: Callable[[str], str] | None = None


def _compiled() -> Callable[[str], str]:
    """The scrubber for the table and users' patterns, as one function of plain `if`s:

        def scrub(text):
            if "sk-" in text: text = sub_0(redact, text)
            ...
            if "I" in text:
                if "AIza" in text: text = sub_2(redact, text)
            ...

    Written out from the table rather than looped over, because a loop's own steps would cost
    as much as the tests it runs (this runs on every classification).
    """
    global _scrub  # noqa: PLW0603 -- compiled once, on first use
    with _lock:
        patterns = {regex: re.compile(*regex) for _, _, regex in _BUILT_IN}
        groups: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
        for gate, word, regex in _BUILT_IN:
            groups.setdefault(gate, []).append((word, patterns[regex]))
        groups.setdefault("", []).extend(("", pattern) for pattern in _added)
        names: dict[str, object] = {"redact": _redact}
        lines = ["def scrub(text):"]
        for gate, checks in groups.items():
            indent = "    "
            if gate:
                lines.append(f"    if {gate!r} in text:")
                indent = "        "
            for word, pattern in checks:
                name = f"sub_{len(names)}"
                names[name] = pattern.sub
                lines.append(f"{indent}if {word!r} in text: text = {name}(redact, text)")
        lines.append("    return text")
        exec("\n".join(lines), names)  # our own table's words, repr-quoted
        _scrub = scrub_function = names["scrub"]  # type: ignore[assignment]
    return scrub_function  # type: ignore[return-value]


def add_secret_pattern(pattern: str | re.Pattern[str]) -> None:
    """Scrub what `pattern` matches, too (its groups, if any, are kept before the marker)."""
    global _scrub, _added  # noqa: PLW0603 -- copy-on-write keeps `scrub` lock-free
    compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
    with _lock:
        _added = (*_added, compiled)
        _scrub = None


def _redact(match: re.Match[str]) -> str:
    kept = "".join(part for part in match.groups() if part)
    return kept + REDACTED


def scrub(text: str) -> str:
    """`text` with every credential it holds replaced by `[REDACTED]`."""
    return (_scrub or _compiled())(text)
