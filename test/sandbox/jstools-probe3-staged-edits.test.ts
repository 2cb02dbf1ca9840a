import { afterEach, describe, expect, it } from "vitest";
import { MAX_STAGED_EVENTS } from "../../src/sandbox/tool-host.ts";
import { attack, modules } from "./attack-helpers.ts";

// Each ctx.stageEdit() the host applies used to be a line of the rollout's trajectory: one call of a generated
// tool could stage tens of thousands of edits within its wall clock (megabytes of trajectory per call, every call
// of the rollout). A rollout now records the first MAX_STAGED_EVENTS one by one and then says the rest are not.

afterEach(() => {
  for (const m of modules.splice(0)) m.dispose();
});

describe("staged edits in the trajectory", () => {
  it("a thousand staged edits in one call record at most MAX_STAGED_EVENTS lines and one note; every edit applies", async () => {
    const a = await attack(
      "function run(ctx) { let ok = 0; for (let i = 0; i < 1000; i++) ok += ctx.stageEdit({ block: 'X = ' + i + '.0' }).ok ? 1 : 0; return ok; }",
    );
    expect(a.result).toEqual({ ok: true, value: 1000 });
    expect(a.env.program).toContain("X = 999.0");
    const staged = a.trajectory.events.filter((e) => e.type === "staged_edit");
    expect(staged).toHaveLength(MAX_STAGED_EVENTS + 1);
    expect(staged.at(-1)).toMatchObject({ note: expect.stringContaining("not recorded one by one") });
    expect(staged.slice(0, -1).every((e) => e.note === undefined)).toBe(true);
  });

  it("the cap is per rollout: a second call adds nothing once it is reached", async () => {
    const a = await attack(
      "function run(ctx, args) { for (let i = 0; i < args.n; i++) ctx.stageEdit({ block: 'X = ' + i + '.0' }); return args.n; }",
      { args: { n: MAX_STAGED_EVENTS + 5 }, second: { n: 50 } },
    );
    expect(a.after).toEqual({ ok: true, value: 50 });
    expect(a.trajectory.events.filter((e) => e.type === "staged_edit")).toHaveLength(MAX_STAGED_EVENTS + 1);
  });

  it("a few staged edits are each recorded", async () => {
    const a = await attack(
      "function run(ctx) { ctx.stageEdit({ block: 'X = 2.0' }); ctx.stageEdit({ block: 'X = 3.0' }); return 1; }",
    );
    expect(a.trajectory.events.filter((e) => e.type === "staged_edit")).toEqual([
      { type: "staged_edit", lines: 6 },
      { type: "staged_edit", lines: 6 },
    ]);
  });
});
