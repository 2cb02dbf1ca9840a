/**
 * Per-slot exploration roles (HarnessTTT's `slot_role`, gray311/Self_Adapt_Harness bebde8e
 * src/outer/proposing/proposer_io.py): with diversity on, slot k of a round gets an instruction of its own so a group
 * of K samples does not collapse into K rewordings of one prompt edit. The order is theirs, components first
 * (tool, skill, middleware, params, rewrite, rewrite, then free slots); the texts are hone's, written for HarnessSpec
 * fields. A QA harness runs neither generated tools nor middleware, so its order keeps skill, params and rewrites.
 */
export type SlotRole = "tool" | "skill" | "middleware" | "params" | "rewrite" | "";

const DISCOVERY_ORDER: SlotRole[] = ["tool", "skill", "middleware", "params", "rewrite", "rewrite"];
const QA_ORDER: SlotRole[] = ["skill", "params", "rewrite", "rewrite"];

const TEXTS: Record<Exclude<SlotRole, "">, string> = {
  tool: [
    "## Exploration role for this proposal: a new capability tool",
    "Add exactly one generated tool (`new_tools`) with real computational value for this task: a constraint checker, a",
    "candidate generator, a local optimiser or an input analyser, derived from this task's structure, not another",
    "score or budget probe. Change the system prompt by at most one short appended line that names the tool and says",
    "when to use it, so the proposal measures the tool. An executor rarely spends a turn on an optional tool: make the",
    "tool replace a step it already takes (editing and evaluating in one call, say) rather than add one.",
  ].join("\n"),
  skill: [
    "## Exploration role for this proposal: a skill of another solution family",
    "Add exactly one new skill (`new_skills`) that teaches an approach different in kind from the incumbent's: name",
    "the family the incumbent is in, and teach one it cannot reach by tuning (another algorithm, representation,",
    "search strategy or decomposition), concretely for this task and with when to use it. Change the system prompt by",
    "at most one short appended line telling the executor to load the skill early.",
  ].join("\n"),
  middleware: [
    "## Exploration role for this proposal: runtime behaviour",
    "Add exactly one generated middleware (`new_middlewares`) that changes how the executor searches, for example by",
    "saying when its last edits stayed in one family, or by turning the remaining budget into a concrete instruction.",
    "It runs before every model call and costs the executor no turn. Change the system prompt by at most one short",
    "appended line.",
  ].join("\n"),
  params: [
    "## Exploration role for this proposal: the operating point",
    "Change only `sampling`, `agent` or `middleware_params`: one or two related fields within their ranges, not the",
    "instructions. Say in the rationale which way you moved them and why (lower temperature to exploit a family that",
    "works, a longer stall patience when restarts come too early, and so on).",
  ].join("\n"),
  rewrite: [
    "## Exploration role for this proposal: a structural rewrite",
    "Rewrite the system prompt as a whole (`system_prompt`): keep what still earns its place, and propose an approach",
    "structurally different from the incumbent's, derived from the task's own structure. A rewrite that only rephrases",
    "the incumbent's recipe wastes the slot.",
  ].join("\n"),
};

/** The role of slot `slot` (empty: a free slot), with diversity on. */
export function slotRole(slot: number, kind: "discovery" | "qa"): SlotRole {
  const order = kind === "qa" ? QA_ORDER : DISCOVERY_ORDER;
  return order[slot] ?? "";
}

/** The instruction appended to slot `slot`'s message; empty without diversity or for a free slot. */
export function slotNote(slot: number, kind: "discovery" | "qa", diversity: boolean): string {
  const role = diversity ? slotRole(slot, kind) : "";
  return role ? TEXTS[role] : "";
}
