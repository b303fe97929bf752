// Reads a UI message stream with the `ai` npm package's own client: DefaultChatTransport
// (fetch, SSE parsing, each chunk validated against the package's uiMessageChunkSchema) and
// readUIMessageStream (the message's parts, as useChat builds them).
// Usage: node ai_sdk_reader.mjs URL [ai's dist/index.js] [send|resume] [chat id]
// Prints one JSON object: the message's parts, the stream's own error chunks (as useChat's
// onError sees them), every chunk the transport validated, and what the transport threw
// (for a non-2xx answer: the AI SDK's APICallError, whose message useChat shows).
const [url, aiPath, mode = "send", chatId = "chat-1"] = process.argv.slice(2);
const { DefaultChatTransport, readUIMessageStream, uiMessageChunkSchema } = await import(
  aiPath ?? "ai"
);

const transport = new DefaultChatTransport({ api: url });
const errors = [];
const chunks = [];
let message;
let thrown = null;
let resumed = true;

async function collect(stream) {
  for await (const chunk of stream) chunks.push(chunk);
}

try {
  const stream =
    mode === "resume"
      ? await transport.reconnectToStream({ chatId, abortSignal: undefined })
      : await transport.sendMessages({
          chatId,
          messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "Say hello." }] }],
          trigger: "submit-message",
          messageId: undefined,
          abortSignal: undefined,
        });
  if (stream === null) {
    resumed = false; // the transport's answer to a 204: no stream to resume
  } else {
    const [mine, reader] = stream.tee();
    const collected = collect(mine);
    for await (const snapshot of readUIMessageStream({
      stream: reader,
      onError: (error) => errors.push(error.message),
    })) {
      message = snapshot;
    }
    await collected;
  }
} catch (error) {
  thrown = {
    name: error.name,
    message: error.message,
    statusCode: error.statusCode ?? null,
    isRetryable: error.isRetryable ?? null,
  };
}
// Every chunk again through the package's own schema: what it accepts, it accepts whole.
const schema = uiMessageChunkSchema();
const invalid = [];
for (const chunk of chunks) {
  const checked = await schema.validate(chunk);
  if (!checked.success) invalid.push(chunk);
}
console.log(JSON.stringify({ parts: message?.parts ?? [], errors, chunks, invalid, thrown, resumed }));
