import type { ChatRequest } from "../types.ts";
import { registerOfflineRole } from "./policy.ts";
import { gaussian, rng, seedFrom } from "./rng.ts";

/**
 * The offline model as a proposer: it recognises the proposer harness (`hone-role: proposer`) and writes valid
 * HarnessSpecs that change what the offline executor responds to (temperature, the `hone-hint:` lines of a skill,
 * stall-restart patience, and sometimes a generated evaluate_block tool), mutating around the best spec in the
 * experience digest. About one proposal in ten is malformed, as real proposers' are, which exercises the repair.
 */
const EVALUATE_BLOCK = `async function run(ctx, args) {
  const staged = ctx.stageEdit({ block: args.block });
  if (!staged.ok) return { valid: false, error: staged.error };
  return await ctx.evaluate();
}`;

interface Base {
  temperature: number;
  stepScale: number;
  literals: number;
  after: number;
}

const num = (text: string, re: RegExp, fallback: number) => {
  const m = re.exec(text);
  const v = m ? Number(m[1]) : Number.NaN;
  return Number.isFinite(v) ? v : fallback;
};
const round3 = (x: number) => Math.round(x * 1000) / 1000;

function skillSection(text: string, name: string): string {
  const start = text.indexOf(`### skills/${name}/SKILL.md`);
  if (start < 0) return "";
  const bodyStart = text.indexOf("\n", start) + 1;
  const end = text.indexOf("\n### ", bodyStart);
  return text.slice(bodyStart, end < 0 ? undefined : end);
}

function withHints(body: string, hints: Record<string, string | number>): string {
  let out = body
    .split("\n")
    .filter((l) => !Object.keys(hints).some((k) => l.trim().startsWith(`hone-hint: ${k}=`)))
    .join("\n")
    .trimEnd();
  for (const [k, v] of Object.entries(hints)) out += `\nhone-hint: ${k}=${v}`;
  return out;
}

function proposals(request: ChatRequest, repairing: number | undefined): unknown[] {
  const user = request.messages.find((m) => m.role === "user")?.content ?? "";
  const text = typeof user === "string" ? user : "";
  const k = repairing ?? num(text, /Write exactly (\d+) HarnessSpecs?/, 4);
  const roundNo = num(text, /for round (\d+)/, 1);
  const skill = /### skills\/([a-z0-9-]+)\/SKILL\.md/.exec(text)?.[1];
  const body = skill ? skillSection(text, skill) : "";
  const bestJson = /best_spec_json: (\{.*\})$/m.exec(text)?.[1];
  const best = bestJson
    ? (JSON.parse(bestJson) as {
        sampling?: { temperature?: number };
        skill_body?: Record<string, string>;
        middleware_params?: { stall_restart?: { after_evaluations?: number } };
      })
    : undefined;
  const bestBody = best?.skill_body && skill ? (best.skill_body[skill] ?? body) : body;
  const base: Base = {
    temperature: best?.sampling?.temperature ?? num(text, /temperature: ([0-9.]+)/, 0.7),
    stepScale: num(bestBody, /hone-hint: step_scale=([0-9.]+)/, 0.08),
    literals: num(bestBody, /hone-hint: literals_per_edit=(\d+)/, 2),
    after: best?.middleware_params?.stall_restart?.after_evaluations ?? num(text, /"after_evaluations":(\d+)/, 6),
  };
  const usesStall = text.includes("hone:stall_restart");
  const hasBlockTool = text.includes("evaluate_block");
  const random = rng(seedFrom(request.sampling?.seed ?? 0, roundNo, repairing ?? -1, text.length));
  const out: unknown[] = [];
  for (let i = 0; i < k; i++) {
    if (repairing === undefined && random() < 0.1) {
      out.push({ sampling: { temperature: 9 }, rationale: "very hot sampling" });
      continue;
    }
    const spec: Record<string, unknown> = {};
    const moves = 1 + Math.floor(random() * 2);
    const why: string[] = [];
    for (let m = 0; m < moves; m++) {
      const pick = random();
      if (pick < 0.3) {
        const t = round3(Math.min(1.5, Math.max(0.05, base.temperature * Math.exp(0.35 * gaussian(random)))));
        spec.sampling = { temperature: t === base.temperature ? round3(t + 0.05) : t };
        why.push(`temperature ${spec.sampling && (spec.sampling as { temperature: number }).temperature}`);
      } else if (pick < 0.75 && skill) {
        const step = round3(Math.min(0.5, Math.max(0.005, base.stepScale * Math.exp(0.6 * gaussian(random)))));
        const literals = Math.min(4, Math.max(1, base.literals + Math.round(gaussian(random))));
        spec.skill_body = { [skill]: withHints(bestBody, { step_scale: step, literals_per_edit: literals }) };
        why.push(`step ${step}, ${literals} literal(s) per edit`);
      } else if (pick < 0.9 && usesStall) {
        const after = Math.min(12, Math.max(2, base.after + Math.round(2 * gaussian(random)) || 1));
        spec.middleware_params = { stall_restart: { after_evaluations: after === base.after ? after + 1 : after } };
        why.push("stall patience");
      } else if (!hasBlockTool && skill) {
        spec.new_tools = [
          {
            name: "evaluate_block",
            description: "Replace the EVOLVE block with `block` and evaluate it in one call (one evaluator call).",
            input_schema: { type: "object", properties: { block: { type: "string" } }, required: ["block"] },
            code: EVALUATE_BLOCK,
          },
        ];
        spec.skill_body = { [skill]: withHints(bestBody, { combined_tool: "evaluate_block" }) };
        why.push("edit and evaluate in one call");
      }
    }
    const qa = /hone-hint: qa_strategy=([a-z]+)/.exec(text);
    if (qa) {
      // A QA solver harness: try another way of combining the question's numbers.
      const strategies = ["last", "sum", "product", "difference", "ratio"].filter((x) => x !== qa[1]);
      const pick = strategies[(i + Math.floor(random() * strategies.length)) % strategies.length] as string;
      const prompt = /### system prompt\n([\s\S]*?)\n\n### /.exec(text)?.[1] ?? "";
      spec.system_prompt = prompt.replace(/hone-hint: qa_strategy=[a-z]+/, `hone-hint: qa_strategy=${pick}`);
      delete spec.skill_body;
      delete spec.new_tools;
      why.push(`qa strategy ${pick}`);
    }
    if (Object.keys(spec).length === 0) spec.sampling = { temperature: round3(Math.min(1.5, base.temperature + 0.1 + i * 0.01)) };
    spec.rationale = `offline proposer: ${why.join("; ") || "temperature nudge"}`;
    out.push(spec);
  }
  return out;
}

registerOfflineRole({
  name: "proposer",
  claims: (r) =>
    r.messages.some((m) => m.role === "system" && typeof m.content === "string" && m.content.includes("hone-role: proposer")),
  reply: (r) => {
    const last = r.messages[r.messages.length - 1];
    const repair =
      last?.role === "user" && typeof last.content === "string"
        ? /Reply with a JSON array of exactly (\d+) corrected/.exec(last.content)
        : null;
    const specs = proposals(r, repair ? Number(repair[1]) : undefined);
    return { content: `\`\`\`json\n${JSON.stringify(specs, null, 1)}\n\`\`\``, tool_calls: [] };
  },
});
