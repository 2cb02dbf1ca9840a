import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import { checkHarness, gateGeneratedCode } from "../../src/sandbox/check.ts";
import { MAX_GENERATED_MODULES } from "../../src/sandbox/gate-rules.ts";
import { copyOf, edit, GENERATED_HARNESS } from "../helpers/fixtures.ts";

// Every generated JavaScript tool and every listing of a generated middleware runs in an isolate of its own that
// keeps what it allocated (up to 32 MB) for the whole rollout. Twenty listings of one middleware holding 20 MB each
// held about 380 MB of the host per rollout; a hundred, gigabytes (times the rollouts running at once). Their
// number per package is capped by the gate, at load time too.

const listing = "  - import: middlewares/halfway_note.js\n    params:\n      note: n\n";

function withListings(extra: number): string {
  const dir = copyOf(GENERATED_HARNESS);
  edit(join(dir, "agent.yaml"), (t) => t.replace("stop_tools:", `${listing.repeat(extra)}stop_tools:`));
  return dir;
}

describe("generated modules per package", () => {
  it("a package listing one middleware many times is refused, naming the rule, the count and what to do", async () => {
    // The example has one generated tool and one generated middleware.
    const dir = withListings(MAX_GENERATED_MODULES);
    const r = await checkHarness(dir);
    expect(r.ok).toBe(false);
    const p = r.problems.find((x) => x.message.includes("[module-count]"));
    expect(p?.check).toBe("gate");
    expect(p?.message).toContain(
      `this package has ${MAX_GENERATED_MODULES + 2} (1 tools, ${MAX_GENERATED_MODULES + 1} middleware listings)`,
    );
    expect(p?.message).toContain("list each middleware once");
    expect(() => loadHarness(dir, { generatedCode: gateGeneratedCode })).toThrow(/module-count/);
  });

  it(`a package with ${MAX_GENERATED_MODULES} generated modules is accepted`, async () => {
    const r = await checkHarness(withListings(MAX_GENERATED_MODULES - 2));
    expect(r.problems).toEqual([]);
  });
});
