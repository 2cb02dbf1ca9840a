// Whether the warm pool's program zygote still answers: one trivial program call on its socket, as hone_runtime
// makes calls (a request line, then a reply framed by its length).
import { connect } from "node:net";

const PING = {
  program: "def ping():\n    return 1\n",
  ext: ".py",
  entry: "ping",
  args: [],
  timeout: 5,
  memory_mb: 256,
  many: false,
};
/** The reply hone's call writes for PING, framed: nothing else counts as an answer. */
const ANSWER = '{"ok": true, "value": 1}';
const FRAMED = `${Buffer.byteLength(ANSWER)}\n${ANSWER}`;

/**
 * Resolves true once the zygote behind `socketPath` has answered PING exactly, false when it refuses the
 * connection, answers anything else, or says nothing within `withinMs`.
 */
export function zygoteAnswers(socketPath: string, withinMs = 15_000): Promise<boolean> {
  return new Promise((resolve) => {
    let got = "";
    const s = connect(socketPath);
    const done = (answered: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve(answered);
    };
    const timer = setTimeout(() => done(false), withinMs);
    s.setEncoding("utf8");
    s.on("connect", () => s.write(`${JSON.stringify(PING)}\n`));
    s.on("data", (chunk: string) => {
      got += chunk;
      if (got.length >= FRAMED.length) done(got === FRAMED);
    });
    s.on("error", () => done(false));
    s.on("close", () => done(got === FRAMED));
  });
}
