"""A harness as a program: `python3 harness.py --task task.json --workdir DIR`, standard library only.

The model endpoint comes from OPENAI_BASE_URL, the model id from HONE_MODEL and the key from OPENAI_API_KEY.
QA tasks: ask once, leave the answer in DIR/answer.txt. Discovery tasks: ask for an improved program (with the
instructions in prompt.md beside this file, which methods that write folders may rewrite) and, when the reply holds
a fenced code block, write it over DIR/<program_file>.
"""
import argparse, json, os, re, urllib.request


def ask(messages):
    req = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
        data=json.dumps({"model": os.environ["HONE_MODEL"], "messages": messages, "temperature": 0}).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "")},
    )
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)["choices"][0]["message"]["content"] or ""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--task", required=True)
    p.add_argument("--workdir", required=True)
    a = p.parse_args()
    task = json.load(open(a.task))
    if task["kind"] == "qa":
        hint = task.get("answer_format") or "a short answer"
        reply = ask([{"role": "user", "content": task["question"] + "\n\nGive your final answer as " + hint + "."}])
        open(os.path.join(a.workdir, "answer.txt"), "w").write(reply)
        return
    path = os.path.join(a.workdir, task["program_file"])
    program = open(path).read()
    guide = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prompt.md")
    system = (open(guide).read() + "\n\n" if os.path.exists(guide) else "") + task["description"]
    reply = ask([{"role": "system", "content": system}, {"role": "user", "content": "Improve this program; reply with the whole program in one code block.\n\n" + program}])
    block = re.search(r"```(?:python)?\n(.*?)```", reply, re.S)
    if block:
        open(path, "w").write(block.group(1))


if __name__ == "__main__":
    main()
