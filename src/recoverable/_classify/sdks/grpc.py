"""grpcio's `RpcError` (`_InactiveRpcError`, `_MultiThreadedRendezvous`, `grpc.aio.AioRpcError`).

A failed gRPC call answers `code()` (a `grpc.StatusCode`, read by its name or its value's
number: grpc is never imported) and `details()`, and may carry a `google.rpc.Status` in its
trailing metadata (`grpc-status-details-bin`: `RetryInfo`, `QuotaFailure`, `ErrorInfo`), read
here by a bounded protobuf wire reader. The canonical name and the details then go through the
same tables a Google HTTP answer does: RESOURCE_EXHAUSTED is a quota (billing) only with a
PerDay quota, else a rate limit, as for google-genai. UNAVAILABLE that never connected is a
provider unreachable, not an overload; CANCELLED is the caller's own cancel.
"""

from __future__ import annotations

from typing import Any

from ..._core.detail import ErrorDetail, unvalidated
from ..http import ProviderBody, parsed_http
from ..pipeline import Handler, always, error_message

__all__ = ["GRPC_CLASSES", "status_details"]

# gRPC canonical codes: (name, the HTTP status google.rpc maps it to), by number.
RPC_CODES = {
    1: ("CANCELLED", 499), 2: ("UNKNOWN", 500), 3: ("INVALID_ARGUMENT", 400),
    4: ("DEADLINE_EXCEEDED", 504), 5: ("NOT_FOUND", 404), 6: ("ALREADY_EXISTS", 409),
    7: ("PERMISSION_DENIED", 403), 8: ("RESOURCE_EXHAUSTED", 429),
    9: ("FAILED_PRECONDITION", 400), 10: ("ABORTED", 409), 11: ("OUT_OF_RANGE", 400),
    12: ("UNIMPLEMENTED", 501), 13: ("INTERNAL", 500), 14: ("UNAVAILABLE", 503),
    15: ("DATA_LOSS", 500), 16: ("UNAUTHENTICATED", 401),
}  # fmt: skip
RPC_STATUS = {name: status for name, status in RPC_CODES.values()}

_DETAILS_KEY = "grpc-status-details-bin"
_MAX_DETAILS_BYTES = 64 * 1024
# What grpcio says when no connection was ever made (nothing was sent).
_NEVER_CONNECTED = ("failed to connect to all addresses", "dns resolution failed")


def rpc_name(code: object) -> str | None:
    """A status code's canonical name: `grpc.StatusCode` (its name, or its value's number),
    a bare number, or the name itself."""
    name = getattr(code, "name", None)
    if isinstance(name, str) and name in RPC_STATUS:
        return name
    value = getattr(code, "value", code)
    if isinstance(value, tuple) and value:
        value = value[0]
    if type(value) is int and value in RPC_CODES:
        return RPC_CODES[value][0]
    return code if isinstance(code, str) and code in RPC_STATUS else None


def _called(exc: BaseException, method: str) -> object:
    """`exc.method()`, or None when it is absent or raises (a forged or broken error)."""
    found = getattr(exc, method, None)
    if not callable(found):
        return None
    try:
        return found()
    except Exception:
        return None


def rpc_error(exc: BaseException) -> ErrorDetail | None:
    name = rpc_name(_called(exc, "code"))
    if name is None:
        return None  # OK, or no status: left to the generic stages
    text = _called(exc, "details")
    message = text if isinstance(text, str) and text else error_message(exc)
    if name == "CANCELLED":  # the caller's own cancellation, not the server's answer
        return unvalidated("run_cancelled", message, source="grpc")
    if name == "UNAVAILABLE" and message.lower().startswith(_NEVER_CONNECTED):
        return unvalidated(
            "provider_unreachable", message, source="grpc", details={"phase": "connect"}
        )
    error = {
        "code": RPC_STATUS[name],
        "message": message,
        "status": name,
        "details": status_details(_called(exc, "trailing_metadata")),
    }
    return parsed_http(RPC_STATUS[name], None, ProviderBody.read({"error": error}), "grpc")


GRPC_CLASSES: dict[str, Handler] = {
    "RpcError": rpc_error,
    # `future.result()` of a call the caller cancelled
    "FutureCancelledError": always("run_cancelled", source="grpc"),
}


# --- google.rpc.Status in the trailing metadata, without protobuf ---------------------------


def status_details(metadata: object) -> list[dict[str, Any]]:
    """The `google.rpc.Status` details a trailing metadata carries, as Google's JSON writes them
    (`@type`, `retryDelay`, `violations[].quotaId`, `reason`); [] for anything else."""
    raw = _details_bytes(metadata)
    if raw is None:
        return []
    out = []
    for number, value in _fields(raw):
        if number != 3 or not isinstance(value, bytes):  # Status.details: repeated Any
            continue
        any_fields = dict(_fields(value))
        type_url, payload = any_fields.get(1), any_fields.get(2)
        if isinstance(type_url, bytes) and isinstance(payload, bytes):
            found = _detail(type_url.decode("utf-8", "replace"), payload)
            if found is not None:
                out.append(found)
    return out


def _details_bytes(metadata: object) -> bytes | None:
    try:
        for pair in metadata or ():  # type: ignore[attr-defined]
            if isinstance(pair, tuple) and len(pair) == 2 and pair[0] == _DETAILS_KEY:
                value = pair[1]
                if isinstance(value, bytes) and len(value) <= _MAX_DETAILS_BYTES:
                    return value
                return None
    except Exception:  # a forged metadata whose iteration raises
        return None
    return None


def _detail(type_url: str, payload: bytes) -> dict[str, Any] | None:
    kind = type_url.rpartition("/")[2]
    if kind == "google.rpc.RetryInfo":
        delay = dict(_fields(_first(payload, 1)))  # RetryInfo.retry_delay: Duration
        seconds, nanos = delay.get(1, 0), delay.get(2, 0)
        if isinstance(seconds, int) and isinstance(nanos, int):
            return {"@type": type_url, "retryDelay": {"seconds": seconds, "nanos": nanos}}
    elif kind == "google.rpc.QuotaFailure":
        ids = [
            dict(_fields(v)).get(5) for n, v in _fields(payload) if n == 1 and isinstance(v, bytes)
        ]
        violations = [
            {"quotaId": i.decode("utf-8", "replace")} for i in ids if isinstance(i, bytes)
        ]
        return {"@type": type_url, "violations": violations}
    elif kind == "google.rpc.ErrorInfo":
        reason = _first(payload, 1)
        return {"@type": type_url, "reason": reason.decode("utf-8", "replace")}
    return None


def _first(payload: bytes, number: int) -> bytes:
    return next((v for n, v in _fields(payload) if n == number and isinstance(v, bytes)), b"")


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """The (field number, value) pairs of one protobuf message: varints and length-delimited
    fields; reading stops at the first thing that is neither or runs past the end."""
    out: list[tuple[int, int | bytes]] = []
    at, end = 0, len(data)
    while at < end:
        key, at = _varint(data, at)
        if key is None:
            break
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            if value is None:
                break
            out.append((number, value))
        elif wire == 2:
            size, at = _varint(data, at)
            if size is None or at + size > end:
                break
            out.append((number, data[at : at + size]))
            at += size
        else:
            break
    return out


def _varint(data: bytes, at: int) -> tuple[int | None, int]:
    value = shift = 0
    while at < len(data) and shift < 64:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
    return None, at
