"""Handlers for the provider SDKs' and HTTP clients' exceptions, by (package, class name).

No SDK is imported: each handler reads the attributes the SDK documents (`status_code`,
`body`, `response.headers`, Google `code` / `status` / `details`, ...) and hands them to the
same HTTP decision tables a raw HTTP answer goes through. One module per SDK family, each
with its table of class names; `HANDLERS` below is the one table the classify face sets.
litellm's classes subclass openai's, and the MRO puts them first; pydantic-ai,
claude-agent-sdk and the HTTP client libraries (httpx/httpx2, requests, aiohttp) have their
own. This package loads on classify's first use only.
"""

from __future__ import annotations

from ..pipeline import Handler
from .bedrock import BOTOCORE_CLASSES, URLLIB3_CLASSES
from .claude_agent_sdk import CLAUDE_AGENT_SDK_CLASSES
from .cohere import COHERE_CLASSES
from .google import API_CORE_CLASSES, GENAI_CLASSES
from .grpc import GRPC_CLASSES
from .http_clients import AIOHTTP_CLASSES, HTTPX_CLASSES, REQUESTS_CLASSES
from .huggingface import HUGGINGFACE_CLASSES
from .langchain import LANGCHAIN_CLASSES, LANGGRAPH_CLASSES
from .litellm import LITELLM_CLASSES
from .mcp import FASTMCP_CLASSES, MCP_CLASSES
from .mistral import MISTRAL_CLASSES
from .ollama import OLLAMA_CLASSES
from .openai import openai_family
from .openai_agents import AGENTS_CLASSES
from .pydantic_ai import PYDANTIC_AI_CLASSES
from .shared import OPENAI_COMPATIBLE

__all__ = ["HANDLERS"]

# package -> {class name -> handler}
_PACKAGES: dict[str, dict[str, Handler]] = {
    "openai": openai_family("openai"),
    "anthropic": openai_family("anthropic"),
    # OpenAI-compatible APIs whose SDKs are generated like openai's, with their own classes.
    **{package: openai_family(package) for package in OPENAI_COMPATIBLE},
    "google.genai": GENAI_CLASSES,
    "google.api_core": API_CORE_CLASSES,
    "grpc": GRPC_CLASSES,
    "mistralai": MISTRAL_CLASSES,
    "ollama": OLLAMA_CLASSES,
    "cohere": COHERE_CLASSES,
    "huggingface_hub": HUGGINGFACE_CLASSES,
    "langchain_core": LANGCHAIN_CLASSES,
    "langgraph": LANGGRAPH_CLASSES,
    "litellm": LITELLM_CLASSES,
    "pydantic_ai": PYDANTIC_AI_CLASSES,
    "claude_agent_sdk": CLAUDE_AGENT_SDK_CLASSES,
    "agents": AGENTS_CLASSES,  # the OpenAI Agents SDK
    "mcp": MCP_CLASSES,  # the Model Context Protocol's SDK (`mcp.MCPError`)
    "fastmcp": FASTMCP_CLASSES,
    "httpx": HTTPX_CLASSES,
    "httpx2": HTTPX_CLASSES,
    "requests": REQUESTS_CLASSES,
    "aiohttp": AIOHTTP_CLASSES,
    "botocore": BOTOCORE_CLASSES,  # boto3's errors; Amazon Bedrock's answers (`bedrock.py`)
    "urllib3": URLLIB3_CLASSES,  # only as raised through botocore's event-stream reader
}

HANDLERS: dict[tuple[str, str], Handler] = {
    (package, name): handler
    for package, classes in _PACKAGES.items()
    for name, handler in classes.items()
}
