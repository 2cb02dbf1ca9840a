import { describe, expect, it } from "vitest";
import { applyOperations, formatPlaybook, parsePlaybook } from "../../src/method/rules/ace.ts";

// Expected text computed by running ace-agent/ace's own `apply_curator_operations` (playbook_utils.py, commit
// ba78d343) on this playbook and these operations with next_id 3: its rebuild appends each section's bullets at the
// end of that section, and inserts the bullets no header took ("general" without a general section) right after the
// "## OTHERS" header, in order.
describe("ace probe: where the curator's ADD bullets land, as upstream places them", () => {
  it('puts "general" bullets at the top of OTHERS and the others (and unknown sections) at its end', () => {
    const pb = parsePlaybook(
      "## STRATEGIES & INSIGHTS\n[sai-00001] helpful=2 harmful=0 :: Check units.\n\n## OTHERS\n[misc-00002] helpful=0 harmful=1 :: Old note.",
    );
    const r = applyOperations(
      pb,
      [
        { type: "ADD", section: "general", content: "g1" },
        { type: "ADD", section: "OTHERS", content: "o1" },
        { type: "ADD", section: "general", content: "g2" },
        { type: "ADD", section: "Nope", content: "n1" },
      ],
      3,
    );
    const upstream =
      "## STRATEGIES & INSIGHTS\n[sai-00001] helpful=2 harmful=0 :: Check units.\n\n## OTHERS\n[gene-00003] helpful=0 harmful=0 :: g1\n[gene-00005] helpful=0 harmful=0 :: g2\n[misc-00002] helpful=0 harmful=1 :: Old note.\n[misc-00004] helpful=0 harmful=0 :: o1\n[misc-00006] helpful=0 harmful=0 :: n1";
    expect(formatPlaybook(r.playbook)).toBe(upstream);
    expect(r.next).toBe(7);
  });
});
