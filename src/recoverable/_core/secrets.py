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
from collections.abc import Callable

from .config import CONFIG
from .generated import generate

__all__ = [
    "REDACTED",
    "ScrubbedMemo",
    "add_secret_pattern",
    "entry_name",
    "names_credential",
    "scrub",
]

REDACTED = "[REDACTED]"
"""What a credential is replaced with (after the part of it that names what it was)."""

_TOKEN = r"A-Za-z0-9_\-"
# Names whose value is a credential, in a query string, a header or `name=value` text, each
# spelled out (a look-behind needs a fixed width): "_" in a name stands for "_", "-" or nothing.
_LABELS = (
    "api_key", "apikey", "key", "token", "access_token", "refresh_token", "id_token",
    "auth_token", "x-api-key", "x-goog-api-key", "client_secret", "secret", "password",
    "passwd", "pwd", "signature", "sig", "x-amz-security-token",
)  # fmt: skip


def _spellings(label: str) -> list[str]:
    """`label` with each "_" read as "_", "-" or nothing (x-api-key's hyphens are fixed)."""
    if "_" not in label:
        return [label]
    head, _, tail = label.partition("_")
    return [head + joint + rest for joint in ("_", "-", "") for rest in _spellings(tail)]


# Names whose value is a credential when a mapping holds it under that name: a header dict
# (`{"api-key": ...}`, Azure OpenAI's, whose 32 hex digits no regex above knows), a config read
# from a payload. An entry is `name=value` spelled as a mapping, so it is read by the same
# labels; `key`, `sig`, `signature` and `pwd` stay query-string names only (as mapping keys
# they name too many things that are not secret: `PWD` is a working directory in an
# environment). Compared lower case, "-" read as "_".
# The names of a mapping's entry that hold a credential, besides the labels of `_LABELS`.
_ENTRY_LABELS = (
    "authorization", "proxy_authorization", "cookie", "set_cookie", "private_key",
    "secret_access_key", "aws_secret_access_key", "session_token", "aws_session_token",
)  # fmt: skip
_ENTRY_NAMES = frozenset(
    spelling.replace("-", "_")
    for label in (
        *(label for label in _LABELS if label not in {"key", "sig", "signature", "pwd"}),
        *_ENTRY_LABELS,
    )
    for spelling in _spellings(label)
)


def names_credential(name: str) -> bool:
    """Whether a mapping's value under `name` is a credential by its name alone (`api_key`,
    `Authorization`, `x-goog-api-key`, `password`, ...): kept as `[REDACTED]`."""
    return name.lower().replace("-", "_") in _ENTRY_NAMES


def _after_label() -> str:
    """A look-behind per spelling: at a "=", the name before it, not inside a longer word."""
    spellings = dict.fromkeys(s for label in _LABELS for s in _spellings(label))
    return "|".join(rf"(?<=(?i:(?<![A-Za-z_]){re.escape(s)})=)" for s in spellings)


# Every regex starts at a literal (a look-behind after it checks what comes before), so that
# the regex engine looks for that literal as fast as `str.find`; a regex that starts with a
# look-behind or ignores case is tried at every position of the text, ~40 times slower. The
# ones that ignore case start at a letter in both cases, or at a "-" or "=", and keep their
# words case-insensitive. What each replaces is the same as when each matched from the start
# of its name (the name is kept either way): tests/core/test_secrets_screen.py compares them with
# the previous forms.
_KEY = (rf"(sk-)(?<![A-Za-z]sk-)[{_TOKEN}]{{16,}}", 0)
_GOOGLE = (rf"(AIza)(?<![A-Za-z]AIza)[{_TOKEN}]{{30,}}", 0)
_AWS = (r"(A(?:KIA|SIA))(?<![A-Za-z]A[KS]IA)[A-Z0-9]{16}\b", 0)
_GITHUB = (
    r"(g)(?<![A-Za-z]g)(?:(h[pousr]_)[A-Za-z0-9]{30,}|(ithub_pat_)[A-Za-z0-9_]{30,})",
    0,
)
_JWT = (rf"(eyJ)(?<![A-Za-z]eyJ)[{_TOKEN}]{{6,}}\.[{_TOKEN}]{{6,}}\.[{_TOKEN}]*", 0)
_SCHEME = (
    r"((?:B(?<!\wB)|b(?<!\wb))(?i:earer|asic)\s+)(?i:[A-Za-z0-9._~+/\-]){6,}=*",
    0,
)
_SPACE = r"(?:\s|%20)"  # a space, or a URL-encoded one
_HEADER = (
    r"(-(?i:key)(?:(?<=(?i:x-api-key))|(?<=(?i:x-goog-api-key)))"
    r"|z(?<=(?i:authoriz))(?i:ation)|Z(?<=(?i:authoriZ))(?i:ation))"
    rf"""(["']?{_SPACE}*[:=]{_SPACE}*["']?)"""
    rf"""(?:(?i:bearer|basic|token){_SPACE}+)?[^\s"',;}}]+""",
    0,
)
# AWS's secret access key and session token carry no prefix of their own: only their name says
# what they are (`aws_secret_access_key = ...` in a config, `"SecretAccessKey": "..."` in JSON).
_AWS_SECRET = (
    r"((?i:secret_?access_?key|session_?token)(?:[\"']|%22)?(?:\s|%20)*(?:[:=]|%3[AaDd])"
    r"(?:\s|%20)*(?:[\"']|%22)?)[A-Za-z0-9/+=%]{16,}",
    0,
)
_URL_PASSWORD = (r"(://[^/\s:@]+:)[^/\s@]+(?=@)", 0)
_PARAMETER = (rf"(=)(?:{_after_label()})[^&\s#\"',;}}]+", 0)

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
    ("_", "ecret_access_key", _AWS_SECRET),  # AWS secret keys and session tokens, by name
    ("_", "ECRET_ACCESS_KEY", _AWS_SECRET),
    ("_", "ession_token", _AWS_SECRET),
    ("_", "ESSION_TOKEN", _AWS_SECRET),
    ("K", "ecretAccessKey", _AWS_SECRET),
    ("T", "essionToken", _AWS_SECRET),
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

# The last texts scrubbed, and what became of them (`_SAME`: left as it was): error texts
# recur (the same rate limit, the same refused connection), and a dict lookup costs a tenth
# of the checks. Bounded twice: short texts only, and emptied when full. The memos, and the
# patterns users add, are the process's: `CONFIG.scrubbed`, `CONFIG.secret_patterns`.
_MEMO_ENTRIES = 512
_MEMO_CHARS = 1024
_SAME = object()


def _lazy(namespace: dict[str, object], name: str, regex: tuple[str, int]) -> Callable[..., str]:
    """`re.compile(*regex).sub`, compiled at its first call (not at import), which then
    takes this stub's place in the scrubber's namespace."""

    def first_call(redact: Callable[[re.Match[str]], str], text: str) -> str:
        namespace[name] = sub = re.compile(*regex).sub
        return sub(redact, text)

    return first_call


def _written_out() -> Callable[[str], str]:
    """The scrubber, as one function of plain `if`s written out from the table:

        def scrub(text):
            remembered = CONFIG.scrubbed      # this call's memo (a new pattern replaces it)
            done = remembered.get(text)       # seen lately: its answer
            ...
            if "-" in text:
                if "sk-" in text: text = sub_0(redact, text)
                if "-key" in text: text = sub_1(redact, text)
            if "I" in text:
                if "AIza" in text: text = sub_2(redact, text)
            ...
            for pattern in CONFIG.secret_patterns:   # users' patterns
                text = pattern.sub(redact, text)

    rather than a loop over the table, because a loop's own steps would cost as much as the
    tests it runs (this runs on every classification). Compiled by `generate`: a traceback
    through it shows these lines. The memo is read before the patterns, and replaced after
    them (`CONFIG.add_secret_pattern`), so a text scrubbed without a new pattern is never
    remembered in the memo that comes with it.
    """
    groups: dict[str, list[tuple[str, tuple[str, int]]]] = {}
    for gate, word, regex in _BUILT_IN:
        groups.setdefault(gate, []).append((word, regex))
    names: dict[str, object] = {
        "__name__": __name__,
        "CONFIG": CONFIG,
        "redact": _redact,
        "SAME": _SAME,
        "str": str,
        "ENTRIES": _MEMO_ENTRIES,
        "CHARS": _MEMO_CHARS,
    }
    subs: dict[tuple[str, int], str] = {}
    lines = [
        "def scrub(text):",
        "    remembered = CONFIG.scrubbed",
        "    done = remembered.get(text)",
        "    if done is not None and type(text) is str:",  # a str subclass may lie in ==
        "        return text if done is SAME else done",
        "    given = text",
    ]
    for gate, checks in groups.items():
        lines.append(f"    if {gate!r} in text:")
        for word, regex in checks:
            name = subs.get(regex)
            if name is None:
                subs[regex] = name = f"sub_{len(subs)}"
                names[name] = _lazy(names, name, regex)
            lines.append(f"        if {word!r} in text: text = {name}(redact, text)")
    lines += [
        "    for pattern in CONFIG.secret_patterns:",
        "        text = pattern.sub(redact, text)",
        "    if len(given) <= CHARS and type(given) is str:",
        "        if len(remembered) >= ENTRIES:",
        "            remembered.clear()",
        "        remembered[given] = SAME if text is given else text",
        "    return text",
    ]
    function: Callable[[str], str] = generate("scrub", "\n".join(lines) + "\n", names)
    function.__doc__ = "`text` with every credential it holds replaced by `[REDACTED]`."
    return function


def add_secret_pattern(pattern: str | re.Pattern[str]) -> None:
    """Scrub what `pattern` matches, too (its groups, if any, are kept before the marker)."""
    CONFIG.add_secret_pattern(re.compile(pattern) if isinstance(pattern, str) else pattern)


def forget() -> None:
    """Forget the texts and keys scrubbed lately (new memos: a call under way keeps its own)."""
    CONFIG.forget_scrubbed()


def entry_name(name: str) -> tuple[str, bool]:
    """A mapping's key as text is kept (scrubbed: a key may hold a credential too), and whether
    the value under it is a credential by that name (`names_credential`). The keys read lately
    are remembered (`CONFIG.scrubbed_keys`): a payload's keys are the same few names again and
    again."""
    remembered = CONFIG.scrubbed_keys
    found = remembered.get(name)
    if found is not None and type(name) is str:
        return found
    found = (scrub(name), names_credential(name))
    if len(name) <= _MEMO_CHARS and type(name) is str:
        if len(remembered) >= _MEMO_ENTRIES:
            remembered.clear()
        remembered[name] = found
    return found


class ScrubbedMemo:
    """A memo of what was worked out from scrubbed text (a decision, a chain's text): forgotten
    with the scrubber's own memo, when a pattern is added, `forget` runs or a code is
    registered or removed, since what it keeps was scrubbed by the patterns (and decided by
    the table) of its time. Bounded: emptied when full."""

    __slots__ = ("_entries", "_limit", "_under")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._entries: dict[object, object] = {}
        self._under = CONFIG.scrubbed

    def entries(self) -> dict[object, object]:
        """The entries, as of the scrubber's current memo (read them; `keep` adds)."""
        if self._under is not CONFIG.scrubbed:
            self._entries, self._under = {}, CONFIG.scrubbed
        return self._entries

    def keep(self, into: dict[object, object], key: object, value: object) -> None:
        """Remember `value` under `key` (a hashable key of exact, plain types) in `into`, the
        entries read before `value` was worked out: when the scrubber's memo was replaced in
        between (another thread added a pattern), they are already forgotten, and `value`,
        scrubbed under the old patterns, is forgotten with them."""
        if len(into) >= self._limit:
            into.clear()
        into[key] = value


def _redact(match: re.Match[str]) -> str:
    kept = "".join(part for part in match.groups() if part)
    return kept + REDACTED


scrub: Callable[[str], str] = _written_out()
"""`scrub(text)`: `text` with every credential it holds replaced by REDACTED (the part that
names what it was kept), the built-in patterns and those of `add_secret_pattern`."""
