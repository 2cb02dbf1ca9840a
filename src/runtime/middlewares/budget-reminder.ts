import type { Middleware } from "../middleware.ts";

/** From N evaluator calls left, reminds the executor once per change of the count. */
export function budgetReminder(params: { from_calls_left: number; message: string }): Middleware {
  let lastReminded: number | undefined;
  return {
    name: "budget_reminder",
    beforeModel(view) {
      const left = view.budget.left;
      if (left > params.from_calls_left || left === lastReminded) return;
      lastReminded = left;
      const text = params.message.split("{left}").join(String(left));
      return { append: [{ role: "user", content: text }], note: `reminded at ${left} left` };
    },
  };
}
