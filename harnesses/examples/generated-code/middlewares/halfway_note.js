// Generated middleware: once half of the evaluator budget is spent, add one short note before the model call.
function beforeModel(view) {
  const half = Math.floor(view.budget.total / 2);
  if (view.budget.used !== half || half === 0) return null;
  const already = view.messages.some((m) => m.role === "user" && m.content === view.params.note);
  if (already) return null;
  return { append: [{ role: "user", content: view.params.note }], note: "halfway" };
}
