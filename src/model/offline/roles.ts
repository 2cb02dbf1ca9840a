// Registers the offline model's roles beyond the discovery executor; each role is one module and one line here.
import "./proposer-role.ts";
import "./qa-role.ts";
import "./method-roles.ts";
