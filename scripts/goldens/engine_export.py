"""The transformers side of the engine-export check: loads each exported engine model
(scripts/goldens/engine_export_engine.mjs writes them and the engine's goldens) with transformers and
compares it with the engine: the chat template's token ids, greedy answers for 20 prompts, and
log-probabilities (every next token of prompt + answer, and the whole row at the last prompt position).

Run (not in CI) in a venv with torch 2.13.0+cpu, transformers 5.18.0, safetensors 0.8.0, tokenizers 0.23.2:
  python scripts/goldens/engine_export.py --exports /tmp/engine-exports
Writes test/fixtures/engine-export/python-check.json (versions and figures); exits 1 when a check fails.
"""
import argparse
import base64
import json
import pathlib
import sys

import numpy as np
import safetensors
import tokenizers
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "test/fixtures/engine-export"
TOLERANCE = 1e-4


def f32(b64: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype="<f4")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exports", required=True)
    args = ap.parse_args()
    goldens = json.loads((FIXTURES / "goldens.json").read_text())
    torch.manual_seed(0)
    report = {
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "safetensors": safetensors.__version__, "tokenizers": tokenizers.__version__},
        "tolerance": TOLERANCE,
        "models": {},
    }
    ok = True
    for name, g in goldens["models"].items():
        folder = pathlib.Path(args.exports) / name
        tok = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
        assert type(model).__name__ == g["architecture"], (type(model).__name__, g["architecture"])
        template_equal = greedy_equal = 0
        max_next = max_row = 0.0
        for p in g["prompts"]:
            ids = tok.apply_chat_template([{"role": "user", "content": p["question"]}], add_generation_prompt=True, tokenize=True, return_dict=False)
            ids = list(ids["input_ids"]) if isinstance(ids, dict) or hasattr(ids, "keys") else list(ids)
            template_equal += ids == p["prompt"]
            x = torch.tensor([p["prompt"]])
            out = model.generate(x, max_new_tokens=8, do_sample=False, eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"), pad_token_id=256)
            answer = out[0, x.shape[1]:].tolist()
            greedy_equal += answer == p["answer"]
            full = torch.tensor([p["prompt"] + p["answer"]])
            with torch.no_grad():
                lp = torch.log_softmax(model(full).logits[0].double(), dim=-1).numpy()
            targets = full[0, 1:].numpy()
            nxt = lp[np.arange(len(targets)), targets]
            max_next = max(max_next, float(np.abs(nxt - f32(p["next_token_logprobs"])).max()))
            row = lp[len(p["prompt"]) - 1]
            max_row = max(max_row, float(np.abs(row - f32(p["last_prompt_row_logprobs"])).max()))
        n = len(g["prompts"])
        fig = {
            "architecture": g["architecture"],
            "tied": g["tied"],
            "prompts": n,
            "chat_template_ids_equal": template_equal,
            "greedy_answers_equal": greedy_equal,
            "max_abs_logprob_diff_next_tokens": max_next,
            "max_abs_logprob_diff_last_prompt_row": max_row,
            "answer_23_plus_19": tok.decode(g["prompts"][0]["answer"], skip_special_tokens=True),
        }
        report["models"][name] = fig
        ok = ok and template_equal == n and greedy_equal == n and max_next <= TOLERANCE and max_row <= TOLERANCE
        print(name, json.dumps(fig))
    report["passed"] = ok
    (FIXTURES / "python-check.json").write_text(json.dumps(report, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
