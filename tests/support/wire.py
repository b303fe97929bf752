"""What the wire tests share: hypothesis strategies for every agents event, a secret marker."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

import recoverable as rc
from recoverable import agents

SECRET = "sk-wiretestsecret0123456789abcdef"
"""A credential-shaped marker: put in developer text, it must reach no body, event or page."""
MARKER = "DEVTEXT-7f3a9c"
"""A plain marker in developer text (not credential-shaped: only the public writers drop it)."""

# Text without lone surrogates (those are replaced on the wire: see the separate property).
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", "a\nb", "a\r\nb", "\u2028\u2029\x85", "data: x\n\nid: 9", '{"type":"error"}', "[DONE]"]
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(texts, json_values, max_size=4)
codes = st.sampled_from([row.code for row in rc.codes])
# Messages that the scrubber leaves alone (a detail keeps its message as `create` cleaned it).
messages = st.text(st.characters(codec="ascii", exclude_characters="=@"), max_size=40)


@st.composite
def details(draw: st.DrawFn) -> rc.ErrorDetail:
    code = draw(codes)
    row = rc.codes[code]
    fields: dict[str, Any] = {
        "status": draw(st.none() | st.integers(min_value=100, max_value=599)),
        "source": draw(st.none() | st.sampled_from(["openai", "claude", "gemini"])),
        "details": draw(st.dictionaries(messages, st.integers() | messages, max_size=3)),
        "cause": draw(st.none() | messages),
    }
    if row.retryable:
        fields["retry_after_ms"] = draw(st.none() | st.integers(min_value=0, max_value=10**8))
    return rc.ErrorDetail.create(code, draw(messages), **fields)


@st.composite
def results(draw: st.DrawFn) -> agents.RunResult:
    success = draw(st.booleans())
    return agents.RunResult(
        success=success,
        text=draw(texts),
        error=None if success else draw(details()),
        exit_code=draw(st.none() | st.integers(min_value=0, max_value=255)),
        signal=draw(st.none() | st.integers(min_value=1, max_value=64)),
        session_id=draw(st.none() | texts),
        usage=draw(st.none() | json_objects),
        cost_usd=draw(st.none() | st.floats(min_value=0, max_value=1e6)),
        stderr_tail=draw(messages),
    )


events = st.one_of(
    st.builds(agents.TextDelta, texts),
    st.builds(agents.ThinkingDelta, texts),
    st.builds(agents.ToolStart, texts, texts, json_values),
    st.builds(
        agents.ToolEnd,
        texts,
        st.booleans(),
        st.none() | texts,
        st.none() | texts,
        st.none() | details(),
    ),
    st.builds(agents.TurnEnd, st.none() | json_objects),
    st.builds(agents.ErrorEvent, details(), st.sampled_from(["warning", "error"])),
    st.builds(agents.Done, results()),
    st.builds(agents.Raw, texts, json_values),
)
"""Every agents event type, with hostile-looking text in every string."""
