// Registers the offline model's roles beyond the discovery executor; each role is one module and one line here.
// Earlier lines claim first: the coder and BFCL roles come before the QA solver, which claims any final_answer.
import "./proposer-role.ts";
import "./user-role.ts";
import "./tool-agent-role.ts";
import "./coder-role.ts";
import "./bfcl-role.ts";
import "./qa-role.ts";
import "./optimizer-role.ts";
import "./ace-curator-role.ts";
import "./skillopt-analyst-role.ts";
import "./diagnose-role.ts";
import "./method-roles.ts";
import "./plain-chat-role.ts";
