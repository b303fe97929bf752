"""LangGraph for real: a graph whose node calls the real openai client against FakeProvider
on 127.0.0.1, requests counted at the fake, LangGraph's default against
`recoverable.integrations.langgraph` (the figures of docs/integrations/langgraph.md)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import openai
import pytest
from langchain_core.messages import AnyMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import RetryPolicy

import recoverable as rc
from recoverable.integrations import langgraph as rcl
from recoverable.testing import FakeProvider, Fault, Reply, sdk_error
from tests.support import frameworks
from tests.support.frameworks import BAD_ARGUMENTS, KEY, MALFORMED, QUOTA_IN_A_TOOL, tool_output
from tests.support.providers import free_port

MSGS: Any = [{"role": "user", "content": "hi"}]
FAST = rc.RetryPolicy(attempts=3)


class State(TypedDict):
    answer: str | None
    error: dict[str, Any] | None


def _ask(client: openai.OpenAI, model: str) -> str:
    reply = client.chat.completions.create(model=model, messages=MSGS)
    return reply.choices[0].message.content or ""


def _client(url: str, max_retries: int) -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, base_url=url, max_retries=max_retries, timeout=5)


def _run(node: Callable[..., Any], **options: Any) -> dict[str, Any]:
    graph = StateGraph(State)
    graph.add_node("model", node, **options)
    graph.add_edge(START, "model")
    graph.add_edge("model", END)
    result: dict[str, Any] = graph.compile().invoke({"answer": None, "error": None})
    return result


def ours(url: str, *, fallback_to: str | None = None) -> dict[str, Any]:
    """The recipe: the SDK's retries off, the node under `retrying` (or `rc.fallback` across
    two models, each under the same policy), the failure in the state."""
    client = _client(url, max_retries=0)
    if fallback_to is None:
        node = rcl.retrying(lambda state: {"answer": _ask(client, "gpt-a")}, FAST)
    else:
        models = {m: functools.partial(_ask, client, m) for m in ("gpt-a", fallback_to)}

        def node(state: State) -> dict[str, Any]:
            return {"answer": rc.fallback(models, retry=FAST).value}

    return _run(node, error_handler=rcl.error_handler())


def default(url: str) -> BaseException:
    """LangGraph's default `RetryPolicy()` over the openai client's default retries (LangGraph's
    interval shortened, for speed only); what the graph raises."""
    client = _client(url, max_retries=2)
    policy = RetryPolicy(initial_interval=0.01, jitter=False)
    with pytest.raises(openai.APIError) as raised:
        _run(lambda state: {"answer": _ask(client, "gpt-a")}, retry_policy=policy)
    return raised.value


# --- the model's failures -------------------------------------------------------------


def test_429_retry_after_2_waits_the_server_then_answers(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=2))
    started = time.monotonic()
    result = ours(fake.openai_url)
    elapsed = time.monotonic() - started
    assert result == {"answer": "Hello from FakeProvider.", "error": None}
    assert [r.fault for r in fake.requests] == ["rate_limited", None]  # one extra request
    assert 2.0 <= elapsed < 4.0


def test_langgraph_policy_alone_cannot_wait_retry_after(fake: FakeProvider) -> None:
    # LangGraph's own loop with our retry_on: retried, but after LangGraph's backoff only.
    fake.fail(Fault.rate_limited(retry_after=2))
    client = _client(fake.openai_url, max_retries=0)
    started = time.monotonic()
    result = _run(
        lambda state: {"answer": _ask(client, "gpt-a")},
        retry_policy=rcl.retry_policy(initial_interval=0.01, jitter=False),
    )
    assert result["answer"] == "Hello from FakeProvider."
    assert len(fake.requests) == 2
    assert time.monotonic() - started < 2.0


@pytest.mark.usefixtures("no_waits")
def test_quota_is_never_retried(fake: FakeProvider) -> None:
    fake.fail(Fault.insufficient_quota(), times=None)
    result = ours(fake.openai_url)
    assert len(fake.requests) == 1
    assert result["answer"] is None
    assert result["error"] == {
        "code": "provider_quota_exceeded",
        "category": "provider",
        "retryable": False,
        "retry_after_ms": None,
        "fix_required": "Add credit or raise the quota of the provider account, or use "
        "another provider",
        "user_message": "The AI service account has run out of credit or quota.",
        "http_status": 502,
        "message": None,
    }


@pytest.mark.usefixtures("no_waits")
@pytest.mark.parametrize(
    ("fault", "code"),
    [
        (Fault.insufficient_quota(), "provider_quota_exceeded"),
        (Fault.unauthorized(), "provider_auth_failed"),
        (Fault.context_too_long(), "provider_context_too_long"),
    ],
)
def test_terminal_faults_fall_back_once_never_retried(
    fake: FakeProvider, fault: Fault, code: str
) -> None:
    fake.fail(fault)
    result = ours(fake.openai_url, fallback_to="gpt-b")
    assert result == {"answer": "Hello from FakeProvider.", "error": None}
    assert [(r.model, r.fault) for r in fake.requests] == [("gpt-a", fault.name), ("gpt-b", None)]
    assert rc.codes.get(code).fallback is True  # the table's column said so


@pytest.mark.usefixtures("no_waits")
def test_malformed_400_is_neither_retried_nor_sent_to_the_next_model(fake: FakeProvider) -> None:
    fake.fail(MALFORMED, times=None)
    result = ours(fake.openai_url, fallback_to="gpt-b")
    assert [r.model for r in fake.requests] == ["gpt-a"]
    assert result["error"]["code"] == "provider_invalid_request"
    assert "foo" not in json.dumps(result)  # the developer text stays out of the state


@pytest.mark.usefixtures("no_waits")
def test_overloaded_is_retried(fake: FakeProvider) -> None:
    fake.fail(Fault.overloaded())
    assert ours(fake.openai_url)["answer"] == "Hello from FakeProvider."
    assert [r.fault for r in fake.requests] == ["overloaded", None]
    fake.reset()
    fake.fail(Fault.overloaded(), times=None)
    result = ours(fake.openai_url)
    assert len(fake.requests) == 3  # the policy's 3 attempts, then the failure in the state
    assert result["error"]["code"] == "provider_overloaded"
    assert result["error"]["retryable"] is False  # exhausted: no outer layer retries it


@pytest.mark.usefixtures("no_waits")
def test_connection_refused_is_retried_then_reported() -> None:
    calls: list[int] = []
    client = _client(f"http://127.0.0.1:{free_port()}/v1", max_retries=0)

    def node(state: State) -> dict[str, Any]:
        calls.append(1)
        return {"answer": _ask(client, "gpt-a")}

    result = _run(rcl.retrying(node, FAST), error_handler=rcl.error_handler())
    assert len(calls) == 3
    assert result["error"]["code"] == "provider_unreachable"


def test_default_connection_refused_runs_the_node_three_times() -> None:
    calls: list[int] = []
    client = _client(f"http://127.0.0.1:{free_port()}/v1", max_retries=0)

    def node(state: State) -> dict[str, Any]:
        calls.append(1)
        return {"answer": _ask(client, "gpt-a")}

    with pytest.raises(openai.APIConnectionError):
        _run(node, retry_policy=RetryPolicy(initial_interval=0.01, jitter=False))
    assert len(calls) == 3  # with the SDK's own 2 retries each: 9 connection attempts


def test_sdk_retries_left_on_make_the_sdk_the_only_layer(fake: FakeProvider) -> None:
    # Left at the SDK's default max_retries=2, retry_on counts its retries and declines.
    fake.fail(Fault.overloaded(), times=None)
    client = _client(fake.openai_url, max_retries=2)
    with pytest.raises(openai.InternalServerError):
        _run(
            lambda state: {"answer": _ask(client, "gpt-a")},
            retry_policy=rcl.retry_policy(initial_interval=0.01, jitter=False),
        )
    assert len(fake.requests) == 3  # LangGraph's default policy: 9


def test_retry_on_is_the_classification() -> None:
    assert rcl.retry_on(sdk_error("openai", Fault.overloaded())) is True
    assert rcl.retry_on(sdk_error("openai", Fault.rate_limited(retry_after=1))) is True
    assert rcl.retry_on(sdk_error("openai", Fault.insufficient_quota())) is False
    assert rcl.retry_on(sdk_error("openai", Fault.unauthorized())) is False
    assert rcl.retry_on(ValueError("x")) is False
    assert rcl.retry_on(ConnectionRefusedError()) is True


# --- LangGraph's default, counted the same way -----------------------------------------


def test_default_429_once_is_the_sdks_own_retry(fake: FakeProvider) -> None:
    fake.fail(Fault.rate_limited(retry_after=2))
    client = _client(fake.openai_url, max_retries=2)
    policy = RetryPolicy(initial_interval=0.01, jitter=False)
    started = time.monotonic()
    result = _run(lambda state: {"answer": _ask(client, "gpt-a")}, retry_policy=policy)
    assert result["answer"] == "Hello from FakeProvider."
    assert len(fake.requests) == 2  # the openai client waited the header itself
    assert time.monotonic() - started >= 2.0


@pytest.mark.parametrize(
    ("fault", "requests", "raised"),
    [
        (Fault.insufficient_quota(), 9, openai.RateLimitError),
        (Fault.unauthorized(), 3, openai.AuthenticationError),
        (Fault.context_too_long(), 3, openai.BadRequestError),
        (MALFORMED, 3, openai.BadRequestError),
        (Fault.overloaded(), 9, openai.InternalServerError),
    ],
)
def test_default_retries_terminal_faults(
    fake: FakeProvider, fault: Fault, requests: int, raised: type[BaseException]
) -> None:
    fake.fail(fault, times=None)
    assert isinstance(default(fake.openai_url), raised)
    assert len(fake.requests) == requests


# --- tools: what the model reads -------------------------------------------------------


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


add = tool(frameworks.add)
summarize = tool(frameworks.summarize)


def _agent(fake: FakeProvider, tools_node: ToolNode) -> None:
    llm = ChatOpenAI(model="gpt-a", base_url=fake.openai_url, api_key=KEY, max_retries=0)
    model = llm.bind_tools([add, summarize])
    graph = StateGraph(Chat)
    graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", tools_node)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    graph.compile().invoke({"messages": [HumanMessage("go")]})


def test_bad_arguments_tell_the_model_to_correct_its_call(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("add", {"a": "secret-x", "b": 2}, then="done"))
    _agent(fake, rcl.tool_node([add, summarize]))
    assert json.loads(tool_output(fake)) == BAD_ARGUMENTS
    assert len(fake.requests) == 2


def test_a_provider_error_in_a_tool_tells_the_model_to_stop(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("summarize", {"text": "t"}, then="done"))
    _agent(fake, rcl.tool_node([add, summarize]))
    assert json.loads(tool_output(fake)) == QUOTA_IN_A_TOOL
    assert "insufficient_quota" not in tool_output(fake)  # no exception text


def test_the_tool_message_artifact_carries_the_classification(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("summarize", {"text": "t"}, then="done"))
    seen: list[Any] = []
    node = rcl.tool_node([add, summarize])

    def tools(state: Chat) -> Any:
        update = node.invoke(state)
        seen.extend(update["messages"])
        return update

    _agent(fake, tools)  # type: ignore[arg-type]
    (message,) = seen
    assert message.status == "error"
    assert message.artifact["recoverable"]["code"] == "provider_quota_exceeded"
    assert message.artifact["recoverable"]["http_status"] == 502


def test_handle_tool_errors_gets_the_same_text(fake: FakeProvider) -> None:
    fake.reply(Reply.tool_call("summarize", {"text": "t"}, then="done"))
    _agent(fake, ToolNode([add, summarize], handle_tool_errors=rcl.tool_error_text))
    assert json.loads(tool_output(fake))["error"]["code"] == "provider_quota_exceeded"


def test_default_tool_node_shows_the_arguments_and_raises_provider_errors(
    fake: FakeProvider,
) -> None:
    fake.reply(Reply.tool_call("add", {"a": "secret-x", "b": 2}, then="done"))
    _agent(fake, ToolNode([add, summarize]))
    assert tool_output(fake).startswith(
        "Error invoking tool 'add' with kwargs {'a': 'secret-x', 'b': 2} with error:\n"
    )
    fake.reset()
    fake.reply(Reply.tool_call("summarize", {"text": "t"}, then="done"))
    with pytest.raises(openai.RateLimitError):
        _agent(fake, ToolNode([add, summarize]))
    assert len(fake.requests) == 1  # the model never hears of it: the graph raised


def test_the_module_imports_without_loading_langgraph() -> None:
    code = (
        "import sys, recoverable.integrations.langgraph; "
        "print(sorted(n for n in sys.modules if n.startswith(('langgraph', 'langchain'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


async def test_an_async_graph_waits_and_its_tools_answer_alike(fake: FakeProvider) -> None:
    # The async forms: an `async def` node under `retrying`, `awrap_tool_call` in the ToolNode.
    fake.fail(Fault.overloaded())
    fake.reply(Reply.tool_call("summarize", {"text": "t"}, then="done"))
    llm = ChatOpenAI(model="gpt-a", base_url=fake.openai_url, api_key=KEY, max_retries=0)
    model = llm.bind_tools([add, summarize])

    async def call_model(state: Chat) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(Chat)
    graph.add_node("model", rcl.retrying(call_model, rc.RetryPolicy(initial_delay=0.01)))
    graph.add_node("tools", rcl.tool_node([add, summarize]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    result = await graph.compile().ainvoke({"messages": [HumanMessage("go")]})
    assert result["messages"][-1].content == "done"
    assert [r.fault for r in fake.requests] == ["overloaded", None, None]
    assert json.loads(tool_output(fake))["error"]["code"] == "provider_quota_exceeded"


@pytest.mark.usefixtures("no_waits")
def test_error_handler_can_route_with_the_update(fake: FakeProvider) -> None:
    fake.fail(Fault.unauthorized())
    client = _client(fake.openai_url, max_retries=0)
    graph = StateGraph(State)
    graph.add_node(
        "model",
        rcl.retrying(lambda state: {"answer": _ask(client, "gpt-a")}),
        error_handler=rcl.error_handler(goto="apologise"),
    )
    graph.add_node("apologise", lambda state: {"answer": state["error"]["user_message"]})
    graph.add_edge(START, "model")
    graph.add_edge("apologise", END)
    result = graph.compile().invoke({"answer": None, "error": None})
    assert result["answer"] == rc.codes.get("provider_auth_failed").user_message
    assert result["error"]["code"] == "provider_auth_failed"
