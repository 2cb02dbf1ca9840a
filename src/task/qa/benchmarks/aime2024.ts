import { field, readParquet } from "../readers.ts";
import { aimeBenchmark } from "./aime.ts";

const NAME = "aime_2024_problems.parquet";

/** AIME 2024 I and II, as the Maxwell-Jia/AIME_2024 dataset publishes them (ID, Problem, Solution, Answer). */
export const aime2024 = aimeBenchmark({
  id: "aime2024",
  year: 2024,
  homepage: "https://huggingface.co/datasets/Maxwell-Jia/AIME_2024",
  // Its sha256 could not be checked from here.
  files: [{ name: NAME, url: `https://huggingface.co/datasets/Maxwell-Jia/AIME_2024/resolve/main/${NAME}` }],
  load: async (dir) =>
    (await readParquet(`${dir}/${NAME}`)).map((r, i) => {
      const where = `${NAME} row ${i}`;
      return { id: field(r, "ID", where), question: field(r, "Problem", where), gold: field(r, "Answer", where) };
    }),
});
