"""FakeProvider under the load it is meant for: hundreds of concurrent clients, long keep-alive
connections, pipelined requests, and a bounded record of what it received. Loopback only.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable

import httpx
import pytest

from recoverable.testing import FakeProvider, Limits

from ..support.providers import HELLO, Answer, connect, exchange, keep_alive, post, read_answer

CLIENTS = 200
CHAT = "/v1/chat/completions"


def chat(model: str) -> bytes:
    """A Chat Completions request body naming `model`."""
    return json.dumps({"model": model, "messages": []}).encode()


def in_threads(count: int, work: Callable[[int], object]) -> list[object]:
    """Run `work(0)` .. `work(count - 1)` in threads released together; their results or errors."""
    start = threading.Barrier(count)
    results: list[object] = [None] * count

    def run(n: int) -> None:
        start.wait()
        try:
            results[n] = work(n)
        except Exception as exc:
            results[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_200_concurrent_connections_each_get_their_answer(fake: FakeProvider) -> None:
    # All connect at once: a short listen backlog drops the connections it cannot queue.
    def ask(n: int) -> tuple[int, str]:
        answer = exchange(fake, post(CHAT, chat(f"model-{n}")))
        return answer.status, answer.json()["model"]

    results = in_threads(CLIENTS, ask)
    assert results == [(200, f"model-{n}") for n in range(CLIENTS)]
    assert sorted(r.model or "" for r in fake.requests) == sorted(
        f"model-{n}" for n in range(CLIENTS)
    )


def test_200_concurrent_httpx_clients_each_get_their_answers(fake: FakeProvider) -> None:
    # One client per thread, each keeping its connection alive for three requests. They share
    # one (unused) TLS context: building one per client takes longer than the whole test.
    tls = ssl.create_default_context()
    clients = [
        httpx.Client(base_url=fake.openai_url, timeout=10, verify=tls) for _ in range(CLIENTS)
    ]

    def ask(n: int) -> list[tuple[int, str, str]]:
        answers = [
            clients[n].post("/chat/completions", json={"model": f"m-{n}", "messages": []})
            for _ in range(3)
        ]
        return [
            (a.status_code, a.json()["model"], a.json()["choices"][0]["message"]["content"])
            for a in answers
        ]

    try:
        results = in_threads(CLIENTS, ask)
    finally:
        for client in clients:
            client.close()
    assert results == [[(200, f"m-{n}", HELLO)] * 3 for n in range(CLIENTS)]
    assert len(fake.requests) == 3 * CLIENTS


def test_one_keep_alive_connection_serves_many_requests(fake: FakeProvider) -> None:
    with connect(fake) as sock, sock.makefile("rb") as stream:
        answers: list[Answer] = []
        for n in range(300):
            sock.sendall(keep_alive(CHAT, chat(f"m-{n}")))
            answers.append(read_answer(stream))
    assert [(a.status, a.json()["model"]) for a in answers] == [(200, f"m-{n}") for n in range(300)]
    assert answers[-1].headers["x-request-id"] == "req_fake_0300"


def test_pipelined_requests_are_answered_in_order(fake: FakeProvider) -> None:
    with connect(fake) as sock, sock.makefile("rb") as stream:
        sock.sendall(b"".join(keep_alive(CHAT, chat(f"m-{n}")) for n in range(50)))
        answers = [read_answer(stream) for _ in range(50)]
    assert [(a.status, a.json()["model"]) for a in answers] == [(200, f"m-{n}") for n in range(50)]


def test_the_record_keeps_the_newest_max_recorded_requests() -> None:
    with FakeProvider(limits=Limits(max_recorded=3)) as fake:
        answers = [exchange(fake, post(CHAT, chat(f"m-{n}"))) for n in range(5)]
        assert [r.model for r in fake.requests] == ["m-2", "m-3", "m-4"]
    # Request ids count every request, recorded or not.
    assert answers[-1].headers["x-request-id"] == "req_fake_0005"


def test_max_recorded_zero_records_nothing_and_none_everything() -> None:
    with FakeProvider(limits=Limits(max_recorded=0)) as fake:
        assert exchange(fake, post(CHAT, chat("m"))).status == 200
        assert fake.requests == []
    with FakeProvider(limits=Limits(max_recorded=None)) as fake:
        for _ in range(3):
            exchange(fake, post(CHAT, chat("m")))
        assert len(fake.requests) == 3


def test_default_limits() -> None:
    assert FakeProvider().limits == Limits(
        max_body=64 * 1024 * 1024, read_timeout=30.0, max_recorded=10_000
    )


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"max_body": -1}, "max_body must be >= 0, got -1"),
        ({"max_recorded": -1}, "max_recorded must be >= 0 or None, got -1"),
        ({"read_timeout": 0}, "read_timeout must be > 0, got 0"),
    ],
)
def test_limits_refuse_what_cannot_work(limits: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Limits(**limits)  # type: ignore[arg-type]
