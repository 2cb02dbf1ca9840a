"""Reads a τ-bench tasks file (tasks_test.py and the like) without running it.

The file is Python source holding one list of `Task(user_id=..., instruction=..., actions=[Action(name=...,
kwargs={...})], outputs=[...])`. It is parsed with `ast` and every value read with `ast.literal_eval`, so nothing in
it executes and the values keep Python's types (150 is an int, 150.0 a float), as the reward's hash needs.

`python3 tau_tasks.py FILE` prints the tasks' public part as JSON (index, user_id, instruction): what hone's
TypeScript side reads; the actions and outputs stay with the environment process.
"""
import ast
import json
import sys

FIELDS = ("user_id", "instruction", "actions", "outputs")


def _call(node, name):
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name and not node.args):
        raise ValueError("line %d: expected %s(...) with keyword arguments" % (getattr(node, "lineno", 0), name))
    return {k.arg: k.value for k in node.keywords}


def _action(node):
    fields = _call(node, "Action")
    return {"name": ast.literal_eval(fields["name"]), "kwargs": ast.literal_eval(fields["kwargs"])}


def _task(node):
    fields = _call(node, "Task")
    missing = [f for f in FIELDS if f not in fields]
    if missing:
        raise ValueError("line %d: a Task without %s" % (node.lineno, ", ".join(missing)))
    actions = fields["actions"]
    if not isinstance(actions, ast.List):
        raise ValueError("line %d: actions is a list" % node.lineno)
    return {
        "user_id": ast.literal_eval(fields["user_id"]),
        "instruction": ast.literal_eval(fields["instruction"]),
        "actions": [_action(a) for a in actions.elts],
        "outputs": ast.literal_eval(fields["outputs"]),
    }


def read_tasks(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    lists = [n.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.List)]
    if len(lists) != 1:
        raise ValueError("%s: expected one list of tasks" % path)
    return [_task(t) for t in lists[0].elts]


if __name__ == "__main__":
    tasks = read_tasks(sys.argv[1])
    public = [{"index": i, "user_id": t["user_id"], "instruction": t["instruction"]} for i, t in enumerate(tasks)]
    sys.stdout.write(json.dumps(public) + "\n")
