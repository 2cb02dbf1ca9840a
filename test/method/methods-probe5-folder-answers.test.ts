import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readProposals } from "../../src/method/external.ts";
import type { Proposer } from "../../src/method/method.ts";
import { adas } from "../../src/method/methods/adas.ts";
import { jsonObject, readAnswer } from "../../src/method/methods/folder-proposal.ts";
import { methodParams } from "../../src/method/registry.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { proposeContext, syntheticArchive } from "./methods/synthetic-archive.ts";

// A harness file's text often holds its own code fences (a prompt showing the answer format). The folder methods'
// answers carry such files as JSON strings: the fences inside a string must neither end a ```json block (DGM reads
// its blocks by lines, so the JSON's escaped text never ends one) nor be taken for the block when the reply is bare
// JSON (ADAS asks for exactly that).
const PROMPT = 'Think step by step.\nAnswer as:\n```json\n{"answer": 1}\n```\nand show code as ```python blocks```.';

describe("a folder method's JSON answer holding code fences in its files", () => {
  const answer = { files: { "prompt.md": PROMPT }, rationale: "show the format" };

  it("reads a ```json block whose file text holds ``` (DGM's answer form)", () => {
    const r = readAnswer(`Here is the change.\n\n\`\`\`json\n${JSON.stringify(answer, null, 1)}\n\`\`\`\nDone.`);
    expect(r).toEqual({ files: { "prompt.md": PROMPT }, o: answer });
  });

  it("reads a bare JSON reply whose file text holds a ```json block (ADAS's answer form)", () => {
    const design = { thought: "t", name: "format first", files: { "prompt.md": PROMPT } };
    expect(jsonObject(JSON.stringify(design))).toEqual(design);
  });

  it("still reads a block on one line, prose around an object, and reports a reply with none", () => {
    expect(jsonObject('Answer: ```json {"files": {"a": "b"}} ```')).toEqual({ files: { a: "b" } });
    expect(jsonObject('I propose {"files": {"a": "b"}} as the change.')).toEqual({ files: { a: "b" } });
    expect(jsonObject('See {x}.\n```json {"files":\n {"a": "b"}}\n```\nand {y}.')).toEqual({ files: { a: "b" } });
    expect(jsonObject("no object here")).toBe("the answer holds no JSON object");
    expect(jsonObject("```json\n{not json\n```")).toMatch(/^the answer's JSON does not parse: /);
  });

  it("an ADAS generation whose design's prompt shows a ```json answer format is proposed, its prompt whole", async () => {
    const design = JSON.stringify({ thought: "t", name: "format first", files: { "prompt.md": PROMPT } });
    const proposer: Proposer = {
      model: "scripted",
      chat: undefined as never,
      complete: async () => ({ text: design, usage: { promptTokens: 0, completionTokens: 0 } as never }),
    };
    const archive = syntheticArchive([{ id: "r00-seed", round: 0, score: 1.0, kept: true }]);
    const params = methodParams(adas, { bootstrap_samples: 100 }) as never;
    const [p] = await adas.propose(proposeContext(archive, params, proposer, { k: 1 }));
    expect(p?.problems ?? []).toEqual([]);
    expect(readFileSync(join(p?.dir as string, "prompt.md"), "utf8")).toBe(PROMPT);
  });
});

describe("a method program's refusals, as printed", () => {
  it("names the program's files, folders and parents as one printable line (no ESC, no newline)", () => {
    const out = tempDir();
    const bad = join(out, "p1");
    mkdirSync(bad);
    writeFileSync(join(bad, "proposal.json"), JSON.stringify({ parent: "r00-seed\u001b[2J\nround 9 accepted" }));
    mkdirSync(join(out, "p2"));
    writeFileSync(join(out, "p2", "proposal.json"), JSON.stringify({ parent: "r00-seed" }));
    symlinkSync("/etc/passwd", join(out, "p2", "evil\u001b]0;owned\u0007\nname"));
    writeFileSync(join(out, "\u001b[31mloose\nfile"), "x");
    const into = join(tempDir(), "proposals");
    mkdirSync(into);
    const r = readProposals(out, into, new Set(["r00-seed"]), 3);
    expect(r.proposals).toEqual([]);
    expect(r.refused).toHaveLength(3);
    for (const line of r.refused) expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(r.refused.join("\n")).toContain("\\u001b[2J\\u000around 9 accepted");
    expect(lstatSync(out).isDirectory()).toBe(true);
  });
});
