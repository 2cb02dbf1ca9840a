import { field, readJsonl } from "../readers.ts";
import { aimeBenchmark } from "./aime.ts";

const PARTS = ["aime2025-I.jsonl", "aime2025-II.jsonl"];

/** AIME 2025 I and II, as the opencompass/AIME2025 dataset publishes them (question, answer). */
export const aime2025 = aimeBenchmark({
  id: "aime2025",
  year: 2025,
  homepage: "https://huggingface.co/datasets/opencompass/AIME2025",
  // Their sha256 could not be checked from here.
  files: PARTS.map((name) => ({ name, url: `https://huggingface.co/datasets/opencompass/AIME2025/resolve/main/${name}` })),
  load: (dir) =>
    PARTS.flatMap((name) =>
      readJsonl(`${dir}/${name}`).map((r, i) => {
        const where = `${name}:${i + 1}`;
        return {
          id: `${name.replace(".jsonl", "")}-${i + 1}`,
          question: field(r, "question", where),
          gold: field(r, "answer", where),
        };
      }),
    ),
});
