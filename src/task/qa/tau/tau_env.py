"""One τ-bench task's environment, as a process hone talks to in JSON lines (stdin → stdout).

Why Python, and hone's own port rather than τ-bench's files: the reward is a sha256 over Python's str() of the
database and every observation is Python's json.dumps, so exactness rests on Python's int/float distinction, float
repr, round() and the agent's arguments read by json.loads, as τ-bench reads them. Porting to TypeScript would mean
emulating each of those; running τ-bench's own modules would mean shipping its code. tau_retail.py and
tau_airline.py are hone's port, checked against τ-bench's own code on recorded action sequences
(test/fixtures/tau-bench/README.md).

The gold actions and expected outputs stay in this process: hone's TypeScript side never sees them.

    {"op": "open", "domain": "retail", "dir": D, "file": "tasks_test.py", "index": i}
        → {"ok": true, "tools": [...], "wiki": "...", "user_id": "..."}
    {"op": "tool", "name": n, "arguments": "<raw JSON text>"} → {"ok": true, "observation": "...", "done": bool}
    {"op": "respond", "content": "..."}  (the agent's message to the user) → {"ok": true}
    {"op": "oracle", "kind": "gold" | "wrong"} → {"ok": true, "observation": "...", "done": true}
    {"op": "reward"} → {"ok": true, "reward": r, "r_actions": bool, "outputs": {...}, "data_hash": h, "gt_data_hash": g}
"""
import json
import os
import sys
from copy import deepcopy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tau_airline  # noqa: E402
import tau_retail  # noqa: E402
from tau_common import data_hash  # noqa: E402
from tau_tasks import read_tasks  # noqa: E402

DOMAINS = {"retail": tau_retail, "airline": tau_airline}
MAX_LINE = 8 << 20


class Env:
    def __init__(self, domain, folder, tasks_file, index):
        self.domain, self.folder = DOMAINS[domain], folder
        self.task = read_tasks(os.path.join(folder, tasks_file))[index]
        with open(os.path.join(HERE, "tools-%s.json" % domain)) as f:
            self.tools_info = json.load(f)
        with open(os.path.join(folder, "wiki.md")) as f:
            self.wiki = f.read()
        self.data = self.load()
        self.actions = []

    def load(self):
        data = {}
        for key, name in self.domain.DATA_FILES.items():
            with open(os.path.join(self.folder, name)) as f:
                data[key] = json.load(f)
        return data

    def step(self, name, kwargs):
        """τ-bench's Env.step for a tool action: the observation, and whether it ends the conversation."""
        self.actions.append({"name": name, "kwargs": kwargs})
        tool = self.domain.TOOLS.get(name)
        if tool is None:
            return f"Unknown action {name}", False
        try:
            observation = tool(data=self.data, **kwargs)
        except Exception as e:
            observation = f"Error: {e}"
        return observation, name in self.domain.TERMINATE

    def respond(self, content):
        self.actions.append({"name": "respond", "kwargs": {"content": content}})

    def oracle(self, kind):
        """The gold actions as an agent would take them, then the required outputs said to the user; the wrong
        oracle adds one write the task never asks for and says none of the outputs."""
        seen = []
        for action in self.task["actions"]:
            observation, done = self.step(action["name"], deepcopy(action["kwargs"]))
            seen.append("%s: %s" % (action["name"], str(observation)[:200]))
            if done:
                break
        if kind == "wrong":
            wrong = self.domain.wrong_action(self.task)
            observation, _ = self.step(wrong["name"], wrong["kwargs"])
            seen.append("%s: %s" % (wrong["name"], str(observation)[:200]))
            self.respond("I have taken care of it.")
        else:
            self.respond(" ".join(self.task["outputs"]) or "Your request is done.")
        return "\n".join(seen)

    def reward(self):
        """τ-bench's calculate_reward: the database must equal the one the gold actions produce from the initial
        database, and every required output must appear (case and commas aside) in something the agent said."""
        final = data_hash(self.data)
        self.data = self.load()
        for action in self.task["actions"]:
            if action["name"] not in self.domain.TERMINATE and action["name"] != "respond":
                self.step(action["name"], deepcopy(action["kwargs"]))
        gold = data_hash(self.data)
        reward = 1.0 if final == gold else 0.0
        outputs = {}
        for output in self.task["outputs"]:
            said = [a["kwargs"]["content"] for a in self.actions if a["name"] == "respond"]
            outputs[output] = any(output.lower() in str(c).lower().replace(",", "") for c in said)
            if not outputs[output]:
                reward = 0.0
        return {"reward": reward, "r_actions": final == gold, "outputs": outputs, "data_hash": final, "gt_data_hash": gold}


def _tool_call(env, msg):
    try:
        kwargs = json.loads(msg.get("arguments") or "{}")
    except (ValueError, RecursionError) as e:
        return {"observation": f"Error: {e}", "done": False}
    if not isinstance(kwargs, dict):
        return {"observation": "Error: the arguments must be a JSON object", "done": False}
    observation, done = env.step(str(msg.get("name")), kwargs)
    return {"observation": observation, "done": done}


def handle(env, msg):
    op = msg.get("op")
    if op == "tool":
        return _tool_call(env, msg)
    if op == "respond":
        env.respond(str(msg.get("content") or ""))
        return {}
    if op == "oracle":
        return {"observation": env.oracle(msg.get("kind")), "done": True}
    if op == "reward":
        return env.reward()
    raise ValueError("unknown op %r" % op)


def main():
    env = None
    out = sys.stdout
    for line in sys.stdin:
        if len(line) > MAX_LINE:
            out.write(json.dumps({"ok": False, "error": "message too large"}) + "\n")
            break
        try:
            msg = json.loads(line)
            if msg.get("op") == "open":
                env = Env(msg["domain"], msg["dir"], msg["file"], int(msg["index"]))
                reply = {"tools": env.tools_info, "wiki": env.wiki, "user_id": env.task["user_id"]}
            elif env is None:
                raise ValueError("open a task first")
            else:
                reply = handle(env, msg)
            reply["ok"] = True
        except Exception as e:  # the host reports it; the environment's state is unchanged
            reply = {"ok": False, "error": "%s: %s" % (type(e).__name__, str(e)[:500])}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
