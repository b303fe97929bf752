// Reads a UI message stream with the `ai` npm package's own client: DefaultChatTransport
// (fetch, SSE parsing, chunk validation) and readUIMessageStream (the message's parts).
// Usage: node ai_sdk_reader.mjs URL [path to ai's dist/index.js]; prints one JSON object.
const [url, aiPath] = process.argv.slice(2);
const { DefaultChatTransport, readUIMessageStream } = await import(aiPath ?? "ai");

const transport = new DefaultChatTransport({ api: url });
const errors = [];
let message;
try {
  const stream = await transport.sendMessages({
    chatId: "chat-1",
    messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "Say hello." }] }],
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: undefined,
  });
  for await (const snapshot of readUIMessageStream({
    stream,
    onError: (error) => errors.push(error.message),
  })) {
    message = snapshot;
  }
} catch (error) {
  errors.push(`thrown: ${error.message}`);
}
console.log(JSON.stringify({ parts: message?.parts ?? [], errors }));
