#!/usr/bin/env python3
"""hone's reference LoRA trainer: advantage-weighted SFT of the proposer on one round's JSONL.

Set it as `learning.lora.trainer_command` (e.g. `python3 scripts/lora_train.py`). hone runs it after each round with

  HONE_LORA_DATA              the round's JSONL (lora/round-NN.jsonl)
  HONE_LORA_OUTPUT_DIR        where the adapter must be written (it must not exist yet)
  HONE_LORA_BASE_MODEL        the proposer's base model (a Hugging Face id or a local path)
  HONE_LORA_ROUND             the round number
  HONE_LORA_PREVIOUS_ADAPTER  the previous round's adapter, or empty in round 1

Data contract (one JSON object per line, as src/method/lora.ts writes it; other keys are allowed and ignored):
  round       integer >= 1, the same on every line
  slot        integer >= 0, distinct
  prompt      non-empty list of chat messages {"role": system|user|assistant|tool, "content": string}
  completion  string: what the proposer answered in that slot (may be empty for a slot that produced nothing)
  advantage   finite number
  reward      finite number

Training: the rows with advantage > 0 and a non-empty completion, each weighted by advantage / (mean positive
advantage), so the update imitates better-than-average proposals in proportion to how much better they were (the
REINFORCE direction restricted to its positive part, which keeps a small SFT step stable); rows at or below zero add
nothing. The loss of a row is the mean token negative log-likelihood of its completion given its prompt (rendered with
the tokenizer's chat template; prompt tokens are masked). A new LoRA adapter is trained on the base model in round 1;
later rounds continue from HONE_LORA_PREVIOUS_ADAPTER. The adapter (adapter_config.json, adapter_model.safetensors)
is written to a temporary folder and renamed into HONE_LORA_OUTPUT_DIR, so nothing half-written is left there.

  python3 scripts/lora_train.py --check-data [FILE]   validate FILE (default $HONE_LORA_DATA) only: no torch needed;
                                                      prints a JSON summary
Exit codes: 0 done; 2 the data or the arguments are wrong (the message names the file and line); 3 torch,
transformers or peft is not installed; 1 training failed.
Needs for training: torch, transformers, peft (pip install torch transformers peft).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
from typing import Any

ROLES = {"system", "user", "assistant", "tool"}
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024
MAX_ROWS = 100_000


class DataError(Exception):
    """A row that breaks the data contract; str(e) names the file and line."""


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a finite number")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def _check_row(row: Any) -> str | None:
    """The first problem with one decoded row, or None."""
    if not isinstance(row, dict):
        return "a line must be a JSON object"
    for key in ("round", "slot", "prompt", "completion", "advantage", "reward"):
        if key not in row:
            return f'missing "{key}"'
    if not _is_int(row["round"]) or row["round"] < 1:
        return '"round" must be an integer >= 1'
    if not _is_int(row["slot"]) or row["slot"] < 0:
        return '"slot" must be an integer >= 0'
    prompt = row["prompt"]
    if not isinstance(prompt, list) or not prompt:
        return '"prompt" must be a non-empty list of chat messages'
    for i, m in enumerate(prompt):
        if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(m.get("content"), str):
            return f'"prompt"[{i}] must be {{"role": system|user|assistant|tool, "content": string}}'
    if not isinstance(row["completion"], str):
        return '"completion" must be a string'
    for key in ("advantage", "reward"):
        if not _is_number(row[key]):
            return f'"{key}" must be a finite number'
    return None


def load_rows(path: str) -> list[dict[str, Any]]:
    """Reads and checks a round's JSONL; raises DataError naming the file and the first bad line."""
    try:
        size = os.path.getsize(path)
    except OSError as e:
        raise DataError(f"{path}: cannot read it ({e.strerror})") from e
    if size > MAX_FILE_BYTES:
        raise DataError(f"{path}: {size} bytes, more than the {MAX_FILE_BYTES} this trainer reads")
    rows: list[dict[str, Any]] = []
    slots: dict[int, int] = {}
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if len(raw) > MAX_LINE_BYTES:
                raise DataError(f"{path}: line {number}: longer than {MAX_LINE_BYTES} bytes")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise DataError(f"{path}: line {number}: not UTF-8 ({e.reason})") from e
            if not text.strip():
                continue
            try:
                row = json.loads(text, parse_constant=_refuse_constant)
            except RecursionError as e:
                raise DataError(f"{path}: line {number}: JSON nested too deeply") from e
            except ValueError as e:
                raise DataError(f"{path}: line {number}: not valid JSON ({e})") from e
            problem = _check_row(row)
            if problem:
                raise DataError(f"{path}: line {number}: {problem}")
            if rows and row["round"] != rows[0]["round"]:
                raise DataError(f'{path}: line {number}: "round" is {row["round"]}, but line 1 has {rows[0]["round"]}')
            if row["slot"] in slots:
                raise DataError(f'{path}: line {number}: slot {row["slot"]} already on line {slots[row["slot"]]}')
            slots[row["slot"]] = number
            rows.append(row)
            if len(rows) > MAX_ROWS:
                raise DataError(f"{path}: more than {MAX_ROWS} rows")
    if not rows:
        raise DataError(f"{path}: no rows")
    return rows


def training_weights(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], float]]:
    """The rows that train, with their weights (advantage / mean positive advantage)."""
    kept = [r for r in rows if r["advantage"] > 0 and r["completion"].strip()]
    if not kept:
        return []
    mean = sum(r["advantage"] for r in kept) / len(kept)
    return [(r, r["advantage"] / mean) for r in kept]


def summary(path: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    weighted = training_weights(rows)
    return {
        "file": path,
        "round": rows[0]["round"],
        "rows": len(rows),
        "trainable": len(weighted),
        "not_positive": sum(1 for r in rows if r["advantage"] <= 0),
        "empty_completion": sum(1 for r in rows if not r["completion"].strip()),
        "advantage_sum": sum(r["advantage"] for r in rows),
        "weights": [round(w, 6) for _, w in weighted],
    }


def _encode(tokenizer: Any, row: dict[str, Any], max_length: int) -> tuple[list[int], list[int]]:
    prompt_ids = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True)
    completion_ids = tokenizer(row["completion"], add_special_tokens=False)["input_ids"]
    if tokenizer.eos_token_id is not None:
        completion_ids = completion_ids + [tokenizer.eos_token_id]
    completion_ids = completion_ids[:max_length]
    room = max_length - len(completion_ids)
    prompt_ids = list(prompt_ids)[-room:] if room > 0 else []  # keep the end of a long prompt
    return prompt_ids + completion_ids, [-100] * len(prompt_ids) + completion_ids


def train(rows: list[dict[str, Any]], a: argparse.Namespace) -> None:
    try:
        import torch
        from peft import LoraConfig, PeftModel, get_peft_model
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        print(f"lora_train.py: training needs torch, transformers and peft ({e}); pip install torch transformers peft",
              file=sys.stderr)
        sys.exit(3)
    weighted = training_weights(rows)
    out = a.output_dir
    if os.path.exists(out):
        raise DataError(f"{out}: HONE_LORA_OUTPUT_DIR already exists; hone gives each round a new folder")
    tmp = f"{out}.tmp-{os.getpid()}"
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(a.base_model)
    model = AutoModelForCausalLM.from_pretrained(a.base_model, torch_dtype=dtype).to(device)
    if a.previous_adapter:
        model = PeftModel.from_pretrained(model, a.previous_adapter, is_trainable=True)
    else:
        config = LoraConfig(r=a.rank, lora_alpha=a.alpha, lora_dropout=a.dropout, target_modules="all-linear",
                            task_type="CAUSAL_LM")
        model = get_peft_model(model, config)
    examples = [(_encode(tokenizer, r, a.max_length), w) for r, w in weighted]
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=a.learning_rate)
    order = random.Random(a.seed)
    model.train()
    for _ in range(a.epochs if examples else 0):
        order.shuffle(examples)
        for start in range(0, len(examples), a.batch_size):
            batch = examples[start:start + a.batch_size]
            total = sum(w for _, w in batch)
            for (ids, labels), w in batch:
                input_ids = torch.tensor([ids], device=device)
                target = torch.tensor([labels], device=device)
                logits = model(input_ids=input_ids).logits[:, :-1, :].float()
                nll = torch.nn.functional.cross_entropy(
                    logits.reshape(-1, logits.size(-1)), target[:, 1:].reshape(-1), ignore_index=-100)
                ((w / total) * nll).backward()
            optimizer.step()
            optimizer.zero_grad()
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    os.replace(tmp, out)
    print(json.dumps({"adapter": out, "trained_rows": len(examples), "epochs": a.epochs}))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--check-data", nargs="?", const="", default=None, metavar="FILE",
                   help="only validate FILE (default $HONE_LORA_DATA) and print a summary")
    p.add_argument("--data", default=os.environ.get("HONE_LORA_DATA", ""))
    p.add_argument("--output-dir", default=os.environ.get("HONE_LORA_OUTPUT_DIR", ""))
    p.add_argument("--base-model", default=os.environ.get("HONE_LORA_BASE_MODEL", ""))
    p.add_argument("--previous-adapter", default=os.environ.get("HONE_LORA_PREVIOUS_ADAPTER", ""))
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--alpha", type=int, default=32)
    p.add_argument("--dropout", type=float, default=0.05)
    p.add_argument("--learning-rate", type=float, default=1e-5)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--max-length", type=int, default=8192)
    p.add_argument("--seed", type=int, default=int(os.environ.get("HONE_LORA_ROUND", "0") or 0))
    a = p.parse_args(argv)
    path = a.check_data if a.check_data else a.data
    if not path:
        print("lora_train.py: no data file: give --check-data FILE or --data FILE, or set HONE_LORA_DATA", file=sys.stderr)
        return 2
    try:
        rows = load_rows(path)
        if a.check_data is not None:
            print(json.dumps(summary(path, rows)))
            return 0
        for name, value in (("HONE_LORA_OUTPUT_DIR", a.output_dir), ("HONE_LORA_BASE_MODEL", a.base_model)):
            if not value:
                raise DataError(f"{name} is not set (hone sets it when it runs the trainer command)")
        train(rows, a)
        return 0
    except DataError as e:
        print(f"lora_train.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
