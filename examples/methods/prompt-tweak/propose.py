"""A method as a program: asks the proposer for one line of advice and appends it to the best candidate's prompt."""
import json, os, shutil, sys, urllib.request

req = json.load(sys.stdin)
rows = [json.loads(l) for l in open(os.path.join(req["archive_dir"], "candidates.jsonl")) if l.strip()]
best = max((r for r in rows if r["valid"]), key=lambda r: r["score"], default=rows[0])
for k in range(req["proposals"]):
    body = {"model": req["proposer"]["model"], "temperature": 1.0, "seed": k,
            "messages": [{"role": "user", "content": "One line of advice for an agent whose score is %s." % best["score"]}]}
    call = urllib.request.Request(req["proposer"]["base_url"] + "/chat/completions", json.dumps(body).encode(),
                                  {"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    advice = (json.load(urllib.request.urlopen(call))["choices"][0]["message"]["content"] or "").strip().splitlines()
    out = os.path.join(req["output_dir"], "tweak-%d" % k)
    shutil.copytree(os.path.join(req["archive_dir"], "candidates", best["id"]), out)
    with open(os.path.join(out, "prompt.md"), "a") as f:
        f.write("\n\nAdvice (round %d): %s\n" % (req["round"], advice[0] if advice else "keep going"))
    json.dump({"parent": best["id"], "rationale": "appends one line of the proposer's advice"}, open(os.path.join(out, "proposal.json"), "w"))
