"""classify(): any error to an ErrorDetail, by stages in a fixed order.

For each link of an error's cause chain (outermost first: `__cause__`, else an unsuppressed
`__context__`; at most MAX_CAUSE_DEPTH links; cycles cut), the stages run in this order:

1. our own `RecoverableError` / `ErrorDetail`, from this or another installed copy;
2. users' stages (`add_classifier`);
3. handlers matched by (package, class name) over the MRO, most derived first: Python's own
   errors, cancels and exception groups (`python_errors`), the provider SDKs and the HTTP
   client libraries (`sdks`). No SDK is imported;
4. a generic `status_code` / `status` attribute, read as an HTTP answer (`http_answers`).

The first link that any stage recognises gives the classification. Only when no link is
recognised are anchored phrases tried on the outermost message (`text`). Anything else is
`unknown`, never guessed. Stages 1 and 2 live in the engine (`_pipeline`); the built-in
stages 3, 4 and the text stage are set below, and this call is the only place they are set.

The package's names load on first use, and the stages are set then: a module that needs only
a part (the agents' parsers read HTTP answers, phrases and stderr) imports that part without
the SDK and Python-error tables. Only these names classify, so no classification runs before
the stages are set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.exports import Face

if TYPE_CHECKING:
    from .http import from_http, retry_after_ms
    from .pipeline import (
        Handler,
        Stage,
        add_classifier,
        classify,
        classify_known,
        register_handler,
    )
    from .responses import classify_response

__all__ = [
    "Handler",
    "Stage",
    "add_classifier",
    "classify",
    "classify_known",
    "classify_response",
    "from_http",
    "register_handler",
    "retry_after_ms",
]


def __getattr__(name: str) -> object:
    return _FACE.attribute(name)


def __dir__() -> list[str]:
    return _FACE.names()


def _set_stages() -> None:
    """Import the stages, set their order (the one place it is set), bind the names."""
    from . import credentials, pipeline, python_errors
    from .http import from_http, retry_after_ms, status_attribute
    from .responses import classify_response
    from .sdks import HANDLERS as SDK_HANDLERS
    from .text import classify_text

    pipeline.use_stages(
        by_name={
            **python_errors.HANDLERS,
            **credentials.BUILTIN_HANDLERS,
            **SDK_HANDLERS,
            **credentials.HANDLERS,
        },
        generic=(status_attribute,),
        text=classify_text,
    )
    names = {"from_http": from_http, "retry_after_ms": retry_after_ms}
    names["classify_response"] = classify_response
    names.update((name, getattr(pipeline, name)) for name in __all__ if name not in names)
    globals().update(names)


# The stages are set before any name loads (every name here classifies).
_FACE = Face(
    __name__,
    {
        "Handler": "recoverable._classify.pipeline",
        "Stage": "recoverable._classify.pipeline",
        "add_classifier": "recoverable._classify.pipeline",
        "classify": "recoverable._classify.pipeline",
        "classify_known": "recoverable._classify.pipeline",
        "register_handler": "recoverable._classify.pipeline",
        "classify_response": "recoverable._classify.responses",
        "from_http": "recoverable._classify.http",
        "retry_after_ms": "recoverable._classify.http",
    },
    first_use=_set_stages,
)
