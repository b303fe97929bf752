"""The classify engine: runs the stages over an error and its cause chain.

The stages and their order are set in one place, `_classify/__init__.py` (`use_stages`);
this module walks the chain, caches which stages apply to each exception class, and changes
the stages for the two registries users add to (`add_classifier`, `register_handler`). The
stages are one value, `CONFIG.stages`, replaced whole at each change.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Container, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .._core.codes import codes
from .._core.config import CONFIG, Stages
from .._core.detail import (
    MAX_CAUSE_DEPTH,
    ErrorDetail,
    PayloadError,
    copied,
    from_row,
    rewrapped,
    unvalidated,
)
from .._core.error import foreign_detail
from .._core.secrets import ScrubbedMemo, scrub
from .._core.untrusted import MAX_MESSAGE_CHARS, clean_text, clip, safe_str

if TYPE_CHECKING:
    from .._core.code_names import BuiltinCode

__all__ = [
    "Handler",
    "Stage",
    "add_classifier",
    "always",
    "by_class_and_text",
    "cause_chain",
    "classify",
    "classify_by_class",
    "classify_known",
    "error_message",
    "package_of",
    "register_handler",
    "resolve_exception",
    "use_stages",
]

Handler = Callable[[BaseException], ErrorDetail | None]
"""Classifies one exception whose class matched by name; None passes it on."""

Stage = Callable[[BaseException], ErrorDetail | None]
"""A user's classifier stage: an ErrorDetail when it recognises the error, else None."""

TextStage = Callable[[str], ErrorDetail | None]

# From _thread, as threading has it: a Temporal workflow's sandbox refuses
# threading's own names (its lock, called in a workflow, fails the task). It orders the
# writers of `CONFIG.stages` and the routes built from them.
_lock = _thread.allocate_lock()
_routes: dict[type, _Route] = {}  # built from `CONFIG.stages`; cleared whenever they change
_CACHE_LIMIT = 4096


def _change_stages(change: Callable[[Stages], Stages]) -> None:
    """Replace the stages whole (with the lock held: no change is lost) and forget the routes
    built from the old ones."""
    with _lock:
        CONFIG.set_stages(change(CONFIG.stages))
        _routes.clear()


def use_stages(
    by_name: Mapping[tuple[str, str], Handler],
    generic: tuple[Handler, ...],
    text: TextStage,
) -> None:
    """Set the built-in stages: handlers by (package, class name), the generic stages that
    run after them, and the text stage that runs when no link of a chain is recognised."""
    _change_stages(
        lambda stages: stages.replace(
            by_name={**stages.by_name, **by_name}, generic=generic, text=text
        )
    )


def package_of(module: str) -> str:
    """The distribution-level package of a module: its root, two parts for namespaces."""
    root, _, rest = module.partition(".")
    if root == "google" and rest:
        return "google." + rest.partition(".")[0]
    return root


_MAX_FRAMES = 64  # of a traceback walked for the package that raised


def raised_by(exc: BaseException, packages: Container[str]) -> str | None:
    """The first of `packages` whose code is in `exc`'s traceback (by the frames' module
    globals, at most _MAX_FRAMES of them), or None."""
    frame, seen = exc.__traceback__, 0
    while frame is not None and seen < _MAX_FRAMES:
        package = package_of(frame.tb_frame.f_globals.get("__name__", ""))
        if package in packages:
            return package
        frame, seen = frame.tb_next, seen + 1
    return None


def register_handler(package: str, class_name: str, handler: Handler) -> None:
    """Classify exceptions whose MRO holds `package`.`class_name` with `handler`."""
    key = (package, class_name)
    _change_stages(lambda stages: stages.replace(by_name={**stages.by_name, key: handler}))


def add_classifier(stage: Stage, *, first: bool = True) -> Callable[[], None]:
    """Add a stage that runs before the built-in ones; returns a function that removes it."""

    def added(stages: Stages) -> Stages:
        users = (stage, *stages.users) if first else (*stages.users, stage)
        return stages.replace(users=users)

    def removed(stages: Stages) -> Stages:
        return stages.replace(users=tuple(s for s in stages.users if s is not stage))

    _change_stages(added)

    def remove() -> None:
        _change_stages(removed)

    return remove


def always(code: BuiltinCode, *, source: str | None = None, **details: Any) -> Handler:
    """A handler that always answers `code` (with a fixed source and details)."""
    fixed = dict(details) if details else None

    def handler(exc: BaseException) -> ErrorDetail:
        row = codes[code]  # as registered now
        return from_row(row, error_message(exc), None, None, source, details=dict(fixed or ()))

    return by_class_and_text(handler)


_BY_CLASS_AND_TEXT: set[Handler] = set()


def by_class_and_text(handler: Handler) -> Handler:
    """Mark a handler that always answers, from the classes and texts of the error's chain
    alone (it reads no other attribute): classify remembers what a chain it met came to
    (`_resolve_chain`). Returns the handler."""
    _BY_CLASS_AND_TEXT.add(handler)
    return handler


class _Route(NamedTuple):
    """What the stages do with one exception class (cached per class; any registration
    clears the cache)."""

    own: bool  # carries our marker: read its detail before anything else
    handlers: tuple[Handler, ...]  # by-name handlers over the MRO, most derived first
    stages: tuple[Handler, ...]  # users' stages, then `handlers`, then the generic stages
    by_text: bool  # the first stage answers `by_class_and_text`: a chain's answer is kept


def _route_for(kind: type) -> _Route:
    route = _routes.get(kind)
    if route is not None:
        return route
    with _lock:  # a registration meanwhile must not leave a stale route behind
        stages = CONFIG.stages
        handlers = []
        for klass in kind.__mro__:
            handler = stages.by_name.get((package_of(klass.__module__), klass.__name__))
            if handler is not None:
                handlers.append(handler)
        own = getattr(kind, "__recoverable_error__", None) is not None
        all_stages = (*stages.users, *handlers, *stages.generic)
        by_text = not own and bool(all_stages) and all_stages[0] in _BY_CLASS_AND_TEXT
        route = _Route(own, tuple(handlers), all_stages, by_text)
        if len(_routes) >= _CACHE_LIMIT:  # dynamically made classes must not grow it forever
            _routes.clear()
        _routes[kind] = route
    return route


def error_message(exc: BaseException) -> str:
    """The developer text of an exception: never raising, bounded, credentials scrubbed."""
    if type(exc).__str__ is _BASE_STR:  # the usual error: one short ASCII text as argument
        args = exc.args
        if len(args) == 1:
            text = args[0]
            if type(text) is str and 0 < len(text) <= MAX_MESSAGE_CHARS and text.isascii():
                # `clean_text`, with what it checks known already (a redaction may lengthen it)
                text = scrub(text)
                return text if len(text) <= MAX_MESSAGE_CHARS else clip(text)
    return clean_text(_text_of(exc) or type(exc).__name__)


_BASE_STR = BaseException.__str__
_CONTAINERS = (list, tuple, dict, set, frozenset)


def _text_of(exc: BaseException) -> str:
    """`str(exc)`, except that arguments Python would print whole (a huge or deeply nested
    list, say) are printed shortened: the text is clipped anyway, the time it takes is not."""
    if type(exc).__str__ is _BASE_STR:
        args = exc.args
        if len(args) == 1:
            if type(args[0]) is str:
                return args[0]
            if isinstance(args[0], _CONTAINERS):
                return _short_repr(args[0])
        elif args:
            return _short_repr(args)
    return safe_str(exc)


def _short_repr(value: object) -> str:
    import reprlib  # only for exceptions raised with containers as arguments

    shortener = reprlib.Repr()
    shortener.maxlevel, shortener.maxstring, shortener.maxother = 4, 200, 200
    return safe_str(shortener.repr(value))


def _classify_link(exc: BaseException) -> ErrorDetail | None:
    """Every stage but text, on one exception."""
    kind = type(exc)
    route = _routes.get(kind) or _route_for(kind)  # the hot path: one dict lookup
    if route.own:
        detail = foreign_detail(exc)
        if detail is not None:
            return detail
    return _first_answer(route.stages, exc)


def classify_by_class(exc: BaseException) -> ErrorDetail | None:
    """Only the handlers matched by class name (no users' stages, no generic ones)."""
    return _first_answer(_route_for(type(exc)).handlers, exc)


def _first_answer(stages: tuple[Handler, ...], exc: BaseException) -> ErrorDetail | None:
    """The first stage's detail. A stage that raises, or answers something other than an
    ErrorDetail or None, is skipped (it is not the error's fault) and logged."""
    for stage in stages:
        try:
            detail = stage(exc)
        except Exception as failure:
            _stage_failed(stage, "raised", failure)
            continue
        if isinstance(detail, ErrorDetail):
            return detail
        if detail is not None:
            _stage_failed(stage, f"answered a {type(detail).__name__}, not an ErrorDetail or None")
    return None


def _stage_failed(stage: Handler, what: str, exc: BaseException | None = None) -> None:
    """A classifier stage's own bug, told on the `recoverable` logger; classify goes on with
    the next stage. When it raised, the record says where (the frames and classes of its
    traceback, `exc_text`), never what the exception said: its text may hold what the
    classified error carried (principle 6)."""
    import logging  # only when a stage misbehaves: `import recoverable` stays light

    from .._core.log_text import code_name, withheld_traceback

    logger = logging.getLogger("recoverable")
    name = code_name(getattr(stage, "__qualname__", None) or type(stage).__name__)
    line = f"classifier stage {name} {what}; skipped"
    record = logger.makeRecord(logger.name, logging.WARNING, __file__, 0, "%s", (line,), None)
    if exc is not None:
        record.exc_text = withheld_traceback(exc)
    if logger.isEnabledFor(logging.WARNING):
        logger.handle(record)


def cause_chain(exc: BaseException) -> list[BaseException]:
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
    kind = type(links[0])
    own = foreign_detail(links[0]) if (_routes.get(kind) or _route_for(kind)).own else None
    if own is not None:
        return own
    if len(links) == 1:  # the usual chain: one error wrapped once
        return _link_text(links[0])
    return clip(" <- ".join([_link_text(link) for link in links]))


_link_texts = ScrubbedMemo(_CACHE_LIMIT)  # (class, its one text) -> "Type: message"


def _link_text(link: BaseException) -> str:
    """A link of a chain as evidence, "Type: message": remembered for the usual error, one
    plain text as its argument (the same timeout, the same refused connection, again)."""
    args = link.args
    if type(link).__str__ is not _BASE_STR or len(args) != 1 or type(args[0]) is not str:
        return f"{_type_name(type(link))}: {error_message(link)}"
    key = (type(link), args[0])
    entries = _link_texts.entries()
    text = entries.get(key)
    if text is None:
        text = f"{_type_name(type(link))}: {error_message(link)}"
        if len(args[0]) <= MAX_MESSAGE_CHARS:
            _link_texts.keep(entries, key, text)
    return text  # type: ignore[return-value]


def resolve_exception(exc: BaseException) -> ErrorDetail | None:
    """Every stage but text, over the error's cause chain; None when no link is recognised."""
    if exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__):
        return _classify_link(exc)  # no chain: the common case, without the list
    return _resolve_chain(exc)


# What chains of usual errors came to, when their first link's first stage answers from
# classes and texts alone: (class, text, class, text, ...) -> (the route, the detail). The
# same timeout wrapped around the same transport error recurs; its answer is a copy.
_chains = ScrubbedMemo(_CACHE_LIMIT)
_MEMO_LINKS = 4


def _chain_key(exc: BaseException) -> tuple[object, ...] | None:
    """(class, text, ...) of each link of a short chain of usual errors (one plain text as
    argument, the base `__str__`); None for any other chain, and for a cycle (it never ends
    within _MEMO_LINKS)."""
    key: list[object] = []
    link = exc
    for _ in _LINKS:
        args = link.args
        if type(link).__str__ is not _BASE_STR or len(args) != 1 or type(args[0]) is not str:
            return None
        key += (type(link), args[0])
        cause = link.__cause__
        if cause is None:
            if link.__suppress_context__:
                return tuple(key)
            cause = link.__context__
            if cause is None:
                return tuple(key)
        link = cause
    return None


_LINKS = range(_MEMO_LINKS)


def _resolve_chain(exc: BaseException) -> ErrorDetail | None:
    kind = type(exc)
    route = _routes.get(kind) or _route_for(kind)
    key = _chain_key(exc) if route.by_text else None
    if key is None:
        return _resolve_links(exc)
    entries = _chains.entries()
    found = entries.get(key)
    # A hit holds while its route and its code's row are the ones it was decided under (a
    # code registered anew, `replace=True`, is read anew, as the full path would).
    if found is not None and found[0] is route and codes.get(found[1].code) is found[2]:  # type: ignore[index]
        return copied(found[1])  # type: ignore[index]
    detail = _resolve_links(exc)
    if detail is not None and _rememberable(key):
        _chains.keep(entries, key, (route, copied(detail), codes.get(detail.code)))
    return detail


def _rememberable(key: tuple[object, ...]) -> bool:
    """Short texts only, and no link of ours (its detail is its own, not its text's)."""
    return all(
        len(part) <= MAX_MESSAGE_CHARS if type(part) is str else not _route_for(part).own  # type: ignore[arg-type]
        for part in key
    )


def _resolve_links(exc: BaseException) -> ErrorDetail | None:
    links = cause_chain(exc)
    for index, link in enumerate(links):
        detail = _classify_link(link)
        if detail is None:
            continue
        rest = links[index + 1 :]
        if rest and detail.cause is None:
            detail = rewrapped(detail, detail.message, _as_cause(rest))
        if index:
            # Recognised as a cause: keep the outer message, record the wrapped failure.
            detail = rewrapped(detail, error_message(exc), detail)
        return detail
    return None


def _unknown(exc: BaseException) -> ErrorDetail:
    return unvalidated(
        "unknown", error_message(exc), details={"exception_type": _type_name(type(exc))}
    )


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


def _known(obj: object) -> ErrorDetail | None:
    if isinstance(obj, BaseException):
        detail = resolve_exception(obj)
        if detail is None:
            detail = CONFIG.stages.text(error_message(obj))
        return detail
    own = foreign_detail(obj)
    if own is not None:
        return own
    if isinstance(obj, str):
        return CONFIG.stages.text(obj)
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
        if isinstance(obj, BaseException):
            detail = resolve_exception(obj)
            if detail is None:
                detail = CONFIG.stages.text(error_message(obj))
            return detail if detail is not None else _unknown(obj)
        detail = _known(obj)
        if detail is not None:
            return detail
        return ErrorDetail.create("unknown", _describe(obj))
    except Exception:  # classify never raises; this is our bug, not the caller's
        return ErrorDetail.create("unknown", "the error could not be described")


def _describe(obj: object) -> str:
    """The developer text of a value that is no error we know: a mapping's own `message`
    (`{"message": "fail"}` is "fail", as the seeds' `extractErrorMessage` reads it), else its
    text."""
    if obj is None:
        return "no error was given"
    if isinstance(obj, Mapping):
        message = obj.get("message")
        if isinstance(message, str) and message.strip():
            return clean_text(message)
    return clean_text(obj if isinstance(obj, str) else safe_str(obj))
