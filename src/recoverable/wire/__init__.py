"""The detail on the wire: event streams (NDJSON, SSE, the AI SDK's UI message stream), HTTP
answers (typed JSON and RFC 9457 problem details), an ASGI adapter and a client reader.

Empty for now: the wire issue adds one module per format here (`_ndjson.py`, `_sse.py`,
`_ai_sdk.py`, `_http.py`, `_asgi.py`, `_client.py`), each pure but for the ASGI and client
edges, all reading the same event types (`agents._events`) and the same code table.
"""

__all__: list[str] = []
