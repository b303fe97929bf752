"""The classify pipeline: ordered stages over an error and its cause chain.

For each link of the chain (outermost first, `__cause__` then unsuppressed `__context__`,
at most MAX_CAUSE_DEPTH links, cycles cut) the stages run in this order:

1. our own `RecoverableError` / `ErrorDetail`, from this or another installed copy;
2. users' stages (`add_classifier`);
3. handlers matched by (package, class name) over the MRO, most derived first: Python's own
   errors, cancels, exception groups, the provider SDKs, httpx/httpx2. No SDK is imported;
4. a generic `status_code` / `status` attribute read as an HTTP answer.

The first link that any stage recognises gives the classification. Only when no link is
recognised are anchored text patterns tried on the outermost message. Anything else is
`unknown`, never guessed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import NamedTuple

from .._detail import (
    MAX_CAUSE_DEPTH,
    ErrorDetail,
    PayloadError,
    _replace,
    foreign_detail,
    make,
    safe_str,
)

__all__ = [
    "Handler",
    "Stage",
    "add_classifier",
    "classify",
    "classify_known",
    "error_message",
    "register_handler",
]

Handler = Callable[[BaseException], ErrorDetail | None]
"""Classifies one exception whose class matched by name; None passes it on."""

Stage = Callable[[BaseException], ErrorDetail | None]
"""A user's classifier stage: an ErrorDetail when it recognises the error, else None."""

_MAX_MESSAGE = 4000

_by_name: dict[tuple[str, str], Handler] = {}
_routes: dict[type, _Route] = {}
_user_stages: tuple[Stage, ...] = ()
_fallback_stages: list[Handler] = []  # after the by-name handlers (generic HTTP attributes)
_text_stage: list[Callable[[str], ErrorDetail | None]] = []
_lock = threading.Lock()
_CACHE_LIMIT = 4096


def package_of(module: str) -> str:
    """The distribution-level package of a module: its root, two parts for namespaces."""
    root, _, rest = module.partition(".")
    if root == "google" and rest:
        return "google." + rest.partition(".")[0]
    return root


def register_handler(package: str, class_name: str, handler: Handler) -> None:
    """Classify exceptions whose MRO holds `package`.`class_name` with `handler`."""
    with _lock:
        _by_name[(package, class_name)] = handler
        _routes.clear()


def add_classifier(stage: Stage, *, first: bool = True) -> Callable[[], None]:
    """Add a stage that runs before the built-in ones; returns a function that removes it."""
    global _user_stages  # noqa: PLW0603 -- copy-on-write tuple keeps the hot path lock-free
    with _lock:
        _user_stages = (stage, *_user_stages) if first else (*_user_stages, stage)
        _routes.clear()

    def remove() -> None:
        global _user_stages  # noqa: PLW0603
        with _lock:
            _user_stages = tuple(s for s in _user_stages if s is not stage)
            _routes.clear()

    return remove


class _Route(NamedTuple):
    """What the stages do with one exception class (cached per class; any registration
    clears the cache)."""

    own: bool  # carries our marker: read its detail before anything else
    handlers: tuple[Handler, ...]  # by-name handlers over the MRO, most derived first
    stages: tuple[Handler, ...]  # users' stages, then `handlers`, then the fallback stages


def _route_for(kind: type) -> _Route:
    route = _routes.get(kind)
    if route is not None:
        return route
    with _lock:  # a registration meanwhile must not leave a stale route behind
        handlers = []
        for klass in kind.__mro__:
            handler = _by_name.get((package_of(klass.__module__), klass.__name__))
            if handler is not None:
                handlers.append(handler)
        own = getattr(kind, "__recoverable_error__", None) is not None
        route = _Route(own, tuple(handlers), (*_user_stages, *handlers, *_fallback_stages))
        if len(_routes) >= _CACHE_LIMIT:  # dynamically made classes must not grow it forever
            _routes.clear()
        _routes[kind] = route
    return route


def error_message(exc: BaseException) -> str:
    """The developer text of an exception, never raising, bounded in size."""
    text = safe_str(exc)
    if not text:
        text = type(exc).__name__
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "..."


def _classify_link(exc: BaseException) -> ErrorDetail | None:
    """Every stage but text, on one exception."""
    kind = type(exc)
    route = _routes.get(kind) or _route_for(kind)  # the hot path: one dict lookup
    if route.own:
        detail = foreign_detail(exc)
        if detail is not None:
            return detail
    return _first_answer(route.stages, exc)


def _by_class(exc: BaseException) -> ErrorDetail | None:
    """Only the handlers matched by class name (no users' stages, no generic attributes)."""
    return _first_answer(_route_for(type(exc)).handlers, exc)


def _first_answer(stages: tuple[Handler, ...], exc: BaseException) -> ErrorDetail | None:
    """The first stage's detail; a stage that raises is skipped (it is not the error's fault)."""
    for stage in stages:
        try:
            detail = stage(exc)
        except Exception:
            detail = None
        if detail is not None:
            return detail
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """The error and what it wraps: `__cause__`, else an unsuppressed `__context__`."""
    links = [exc]
    link = exc
    while len(links) < MAX_CAUSE_DEPTH:
        cause = link.__cause__
        if cause is None and not link.__suppress_context__:
            cause = link.__context__
        if cause is None or id(cause) in map(id, links):  # a cycle ends the chain
            break
        links.append(cause)
        link = cause
    return links


def _as_cause(links: list[BaseException]) -> ErrorDetail | str:
    """The rest of a chain behind a recognised error: our own detail when it is ours, else
    the evidence as text ("Type: message <- Type: message"), which costs no classification.
    """
    own = foreign_detail(links[0]) if _route_for(type(links[0])).own else None
    if own is not None:
        return own
    if len(links) == 1:  # the usual chain: one error wrapped once
        text = f"{_type_name(type(links[0]))}: {error_message(links[0])}"
    else:
        text = " <- ".join([f"{_type_name(type(link))}: {error_message(link)}" for link in links])
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "..."


def _resolve_exception(exc: BaseException) -> ErrorDetail | None:
    if exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__):
        return _classify_link(exc)  # no chain: the common case, without the list
    return _resolve_chain(exc)


def _resolve_chain(exc: BaseException) -> ErrorDetail | None:
    links = _chain(exc)
    for index, link in enumerate(links):
        detail = _classify_link(link)
        if detail is None:
            continue
        rest = links[index + 1 :]
        if rest and detail.cause is None:
            detail = detail.with_cause(_as_cause(rest))
        if index:
            # Recognised as a cause: keep the outer message, record the wrapped failure.
            detail = _replace(detail, message=error_message(exc)).with_cause(detail)
        return detail
    return None


def _unknown(exc: BaseException) -> ErrorDetail:
    return make("unknown", error_message(exc), details={"exception_type": _type_name(type(exc))})


_type_names: dict[type, str] = {}


def _type_name(kind: type) -> str:
    name = _type_names.get(kind)
    if name is None:
        name = (
            kind.__qualname__
            if kind.__module__ == "builtins"
            else (f"{kind.__module__}.{kind.__qualname__}")
        )
        if len(_type_names) >= _CACHE_LIMIT:
            _type_names.clear()
        _type_names[kind] = name
    return name


def _classify_text(text: str) -> ErrorDetail | None:
    for stage in _text_stage:
        detail = stage(text)
        if detail is not None:
            return detail
    return None


def _known(obj: object) -> ErrorDetail | None:
    if isinstance(obj, BaseException):
        detail = _resolve_exception(obj)
        if detail is None:
            detail = _classify_text(error_message(obj))
        return detail
    own = foreign_detail(obj)
    if own is not None:
        return own
    if isinstance(obj, str):
        return _classify_text(obj)
    if isinstance(obj, Mapping) and "code" in obj:
        try:
            return ErrorDetail.from_dict(obj)
        except PayloadError:
            return None
    return None


def classify_known(obj: object) -> ErrorDetail | None:
    """Like `classify`, but None where `classify` would answer `unknown`."""
    try:
        detail = _known(obj)
    except Exception:
        return None
    if detail is not None and detail.code == "unknown":
        return None
    return detail


def classify(obj: object) -> ErrorDetail:
    """Turn any object (an exception, a payload dict, a string, None) into an ErrorDetail."""
    try:
        if isinstance(obj, BaseException):  # the common case: `_resolve_exception`, inlined
            if obj.__cause__ is None and (obj.__context__ is None or obj.__suppress_context__):
                detail = _classify_link(obj)
            else:
                detail = _resolve_chain(obj)
            if detail is None:
                detail = _classify_text(error_message(obj))
            return detail if detail is not None else _unknown(obj)
        detail = _known(obj)
        if detail is not None:
            return detail
        return ErrorDetail.create("unknown", _describe(obj))
    except Exception:  # classify never raises; this is our bug, not the caller's
        return ErrorDetail.create("unknown", "the error could not be described")


def _describe(obj: object) -> str:
    if isinstance(obj, str):
        return obj[:_MAX_MESSAGE]
    if obj is None:
        return "no error was given"
    text = safe_str(obj)
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "..."


def _set_text_stage(stage: Callable[[str], ErrorDetail | None]) -> None:
    _text_stage[:] = [stage]


def _add_fallback_stage(stage: Handler) -> None:
    with _lock:
        _fallback_stages.append(stage)
        _routes.clear()
