// A zero-latency chat-completions server in its own process, as a real endpoint is: every POST gets the same tool
// call; GET /bodies returns the first 200 request bodies it received. Prints {"port": n} once listening.
import { createServer } from "node:http";

const answer = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 0,
  model: "bench",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "view_program", arguments: "{}" } }],
      },
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 },
});
const bodies = [];
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const text = req.method === "GET" ? JSON.stringify(bodies) : answer;
    if (req.method !== "GET" && bodies.length < 200) bodies.push(Buffer.concat(chunks).toString());
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.stdin.on("end", () => server.close(() => process.exit(0)));
process.stdin.resume();
