// Generated tool: stage a whole-block edit through the EVOLVE-block rules, then evaluate it (charged).
async function run(ctx, args) {
  const staged = ctx.stageEdit({ block: args.block });
  if (!staged.ok) return { valid: false, error: staged.error };
  return await ctx.evaluate();
}
