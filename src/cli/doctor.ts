import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CONSOLE_DIST } from "../console/server.ts";
import { checkEndpoint } from "../model/check.ts";
import { withoutPassword } from "../secret-url.ts";
import { isolationSupport } from "../task/python-env.ts";
import { bwrapCapsTmpfs, DEFAULT_TMP_MB } from "../task/sandbox-layout.ts";
import { findExecutable } from "../which.ts";

/** One thing this machine can or cannot do, what it enables, and how to get it. */
export interface DoctorCheck {
  id: string;
  ok: boolean;
  /** hone's quickstart needs it (node, python3 with numpy, git); everything else widens what hone can do. */
  required: boolean;
  /** What was found (a version, a path), or why it is missing. */
  found: string;
  enables: string;
  install?: { debian: string; macos: string };
}

function run(cmd: string, args: string[]): string | undefined {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", timeout: 30_000, stdio: ["ignore", "pipe", "pipe"] }).trim();
  } catch {
    return undefined;
  }
}

function node(): DoctorCheck {
  const major = Number(process.versions.node.split(".")[0]);
  return {
    id: "node",
    ok: major >= 20,
    required: true,
    found: `node ${process.versions.node}${major >= 20 ? "" : " (hone needs 20 or later)"}`,
    enables: "hone itself",
    install: { debian: "install Node.js 20 from https://nodejs.org or NodeSource", macos: "brew install node@20" },
  };
}

function python(): DoctorCheck {
  const python = findExecutable("python3");
  const numpy = python
    ? run("python3", ["-c", "import sys, numpy; print(sys.version.split()[0], numpy.__version__)"])
    : undefined;
  const version = python ? run("python3", ["-c", "import sys; print(sys.version.split()[0])"]) : undefined;
  const [py, np] = numpy?.split(" ") ?? [];
  return {
    id: "python3",
    ok: numpy !== undefined,
    required: true,
    found: !python
      ? "python3 is not on PATH"
      : numpy
        ? `python3 ${py} with numpy ${np}`
        : `python3 ${version ?? "(does not start)"} without numpy`,
    enables: "the task evaluators (hone run, optimize, evaluate; every built-in task)",
    install: {
      debian: "sudo apt-get install python3 python3-numpy",
      macos: "brew install python && python3 -m pip install numpy",
    },
  };
}

function git(): DoctorCheck {
  const v = run("git", ["--version"]);
  return {
    id: "git",
    ok: v !== undefined,
    required: true,
    found: v ?? "git is not on PATH",
    enables: "hone optimize's harness history (hone log, hone diff, resuming, the console's diffs)",
    install: { debian: "sudo apt-get install git", macos: "xcode-select --install" },
  };
}

function bubblewrap(): DoctorCheck {
  const s = isolationSupport();
  const installed = findExecutable("bwrap") !== undefined;
  return {
    id: "bubblewrap",
    ok: s.bwrap,
    required: false,
    found: s.bwrap
      ? `bwrap works here (it can create namespaces)${tmpfsCap()}`
      : installed && s.reason?.startsWith("bwrap cannot create its namespaces")
        ? `${s.reason}; in a container, allow user namespaces (for Docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined)`
        : (s.reason ?? "bwrap is not on PATH"),
    enables:
      "the program sandbox: evaluated programs get no network, no writes outside their scratch folder and no view of the task folder (without it they still run in their own process with no secrets, and each run says what is not isolated)",
    install: {
      debian: "sudo apt-get install bubblewrap",
      macos: "not available (bubblewrap needs Linux namespaces); programs run without the sandbox",
    },
  };
}

/** Whether the sandboxes' /tmp and /dev/shm (a tmpfs each: the host's memory) have a size, said after "bwrap works". */
function tmpfsCap(): string {
  return bwrapCapsTmpfs()
    ? `; each sandbox's /tmp and /dev/shm are capped at ${DEFAULT_TMP_MB} MB (a task's hone.yaml may set tmp_mb)`
    : "; but this bwrap cannot cap the size of a sandbox's /tmp and /dev/shm (its --size option came in bubblewrap 0.7): an evaluator or a harness program can fill them with as much of the host's memory as it likes; install bubblewrap 0.7 or later to close this";
}

function tool(id: string, names: string[], enables: string, install: DoctorCheck["install"], found?: string): DoctorCheck {
  const path = found ?? names.map((n) => findExecutable(n)).find((p) => p !== undefined);
  return { id, ok: path !== undefined, required: false, found: path ?? `${names[0]} is not on PATH`, enables, install };
}

export interface DoctorOptions {
  endpoint?: { baseUrl: string; model: string; dialect?: "vllm" | "openai"; apiKeyEnv?: string };
  queue?: string;
}

/** Everything `hone doctor` looks at, in the order it prints them. */
export async function doctor(o: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const chromium = process.env.HONE_CHROMIUM && existsSync(process.env.HONE_CHROMIUM) ? process.env.HONE_CHROMIUM : undefined;
  const checks = [
    node(),
    python(),
    git(),
    bubblewrap(),
    tool(
      "redis-server",
      ["redis-server"],
      "a local queue for hone worker and --queue (rollouts on many machines), and the distributed tests",
      { debian: "sudo apt-get install redis-server", macos: "brew install redis" },
    ),
    tool("sbatch", ["sbatch"], "--runner slurm (each rollout an sbatch job) and the Slurm tests", {
      debian:
        "on a cluster's login node (its admins install Slurm); to test on one machine: sudo apt-get install slurm-wlm munge",
      macos: "not available; run hone on a Slurm cluster's login node",
    }),
    tool(
      "chromium",
      ["chromium", "chromium-browser"],
      "the console's browser tests (hone view itself works with any browser you have)",
      { debian: "sudo apt-get install chromium", macos: "brew install --cask chromium" },
      chromium,
    ),
    {
      id: "console",
      ok: existsSync(join(CONSOLE_DIST, "index.html")),
      required: false,
      found: existsSync(join(CONSOLE_DIST, "index.html")) ? `pages built in ${CONSOLE_DIST}` : "the pages are not built",
      enables: "hone view (it builds them on first use if needed)",
      install: { debian: "npm run build:console", macos: "npm run build:console" },
    },
  ];
  if (o.queue) {
    // Connected as hone's queue connects (TLS for rediss://, an ACL user, a database); loaded only when asked for.
    const { queueFault } = await import("../loop/distributed/queue-connection.ts");
    const why = await queueFault(o.queue);
    checks.push({
      id: "queue",
      ok: why === undefined,
      required: true,
      found: why === undefined ? `${withoutPassword(o.queue)} answers` : `${withoutPassword(o.queue)}: ${why}`,
      enables: "rollouts and QA tasks on the hone workers of that queue",
    });
  }
  if (o.endpoint) {
    const r = await checkEndpoint(o.endpoint);
    const failed = r.steps.find((s) => !s.ok);
    checks.push({
      id: "endpoint",
      ok: r.ok,
      required: true,
      found: `${withoutPassword(o.endpoint.baseUrl)} · ${o.endpoint.model}: ${failed ? `${failed.step}: ${failed.detail}` : r.steps.map((s) => s.detail).join("; ")}`,
      enables: "runs on that model (--base-url, --model)",
    });
  }
  return checks;
}
