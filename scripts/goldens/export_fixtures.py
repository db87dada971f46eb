"""Makes the export fixtures and goldens (test/fixtures/export/), and checks Tinker Studio's export
against the real libraries. Run in a venv with the pinned versions (see docs/export.md):

    torch 2.13.0+cpu, transformers 5.18.0, peft 0.21.0, safetensors 0.8.0

    npm run build && python scripts/goldens/export_fixtures.py

For three tiny random model families (Qwen3 dense, Qwen3 MoE whose experts transformers 5 fuses into
3-D parameters, Llama with tied embeddings) it writes a base model folder and a LoRA checkpoint in
Tinker's archive layout, runs `node dist/cli.js export adapter|merge` on them, and checks:
  - PEFT loads OUR adapter, and its logits equal those of OUR merged model loaded by transformers
    (max abs difference <= 1e-5 in fp32);
  - PEFT's merge_and_unload() equals OUR merge tensor for tensor (bit-exact in fp32; a bf16 base is
    checked against W + delta added in fp32 and rounded to bf16 once).
The goldens (sha256 of every merged tensor, the logit differences) are what the TS tests compare
against; CI runs no Python.

LoRA values are small dyadic rationals (k/128), so every product and sum of the delta is exact in fp32
and bit-exactness does not depend on the BLAS's summation order; the base weights are random floats.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import peft
import safetensors
import torch
import transformers
from peft import PeftModel
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM, LlamaConfig, Qwen3Config, Qwen3MoeConfig

ROOT = Path(__file__).resolve().parents[2]
RANK, ALPHA = 4, 8  # alpha / r = 2: scaling is exact
TOKENS = [[3, 17, 42, 5, 77, 9, 30, 61]]


def tiny(family: str):
    common = dict(vocab_size=96, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=8, max_position_embeddings=64)
    if family == "qwen3":
        return Qwen3Config(**common, tie_word_embeddings=False), "Qwen/Qwen3-8B"
    if family == "qwen3_moe":
        return Qwen3MoeConfig(**common, moe_intermediate_size=24, num_experts=4, num_experts_per_tok=2,
                              decoder_sparse_step=1, mlp_only_layers=[], tie_word_embeddings=False), "Qwen/Qwen3-30B-A3B"
    if family == "llama_tied":
        return LlamaConfig(**common, tie_word_embeddings=True), "meta-llama/Llama-3.2-1B"
    raise ValueError(family)


def dyadic(gen: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randint(-4, 5, shape, generator=gen).float() / 128


def tinker_adapter(config, family: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """LoRA tensors under Tinker's archive names (experts as 3-D (E, r, dim), one side shared)."""
    H, I, V = config.hidden_size, config.intermediate_size, config.vocab_size
    q, kv = config.num_attention_heads * config.head_dim, config.num_key_value_heads * config.head_dim
    out: dict[str, torch.Tensor] = {}

    def pair(module: str, a: torch.Tensor, b: torch.Tensor):
        out[f"base_model.model.{module}.lora_A.weight"] = a
        out[f"base_model.model.{module}.lora_B.weight"] = b

    for layer in range(config.num_hidden_layers):
        p = f"model.layers.{layer}"
        for name, o in (("q_proj", q), ("k_proj", kv), ("v_proj", kv)):
            pair(f"{p}.self_attn.{name}", dyadic(gen, RANK, H), dyadic(gen, o, RANK))
        pair(f"{p}.self_attn.o_proj", dyadic(gen, RANK, q), dyadic(gen, H, RANK))
        if family == "qwen3_moe":
            E, M = config.num_experts, config.moe_intermediate_size
            pair(f"{p}.mlp.experts.w1", dyadic(gen, 1, RANK, H), dyadic(gen, E, M, RANK))
            pair(f"{p}.mlp.experts.w3", dyadic(gen, 1, RANK, H), dyadic(gen, E, M, RANK))
            pair(f"{p}.mlp.experts.w2", dyadic(gen, E, RANK, M), dyadic(gen, 1, H, RANK))
        else:
            pair(f"{p}.mlp.gate_proj", dyadic(gen, RANK, H), dyadic(gen, I, RANK))
            pair(f"{p}.mlp.up_proj", dyadic(gen, RANK, H), dyadic(gen, I, RANK))
            pair(f"{p}.mlp.down_proj", dyadic(gen, RANK, I), dyadic(gen, H, RANK))
    if not config.tie_word_embeddings:
        # PEFT applies an lm_head LoRA on the output side only; on a tied model merging it would also
        # change the input embeddings, so the tied family trains no unembedding here
        pair("model.unembed_tokens", dyadic(gen, RANK, H), dyadic(gen, V, RANK))
    return out


def sha(t: torch.Tensor) -> str:
    return hashlib.sha256(t.contiguous().view(torch.uint8).numpy().tobytes()).hexdigest()


def shard_tensors(folder: Path) -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    for f in sorted(folder.glob("*.safetensors")):
        out.update(load_file(str(f)))
    return out


def cli(*args: str) -> None:
    subprocess.run(["node", str(ROOT / "dist/cli.js"), "export", *args], check=True)


def logits(model) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor(TOKENS)).logits.float()


def make_family(family: str, fixtures: Path, work: Path, seed: int) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    config, hub_name = tiny(family)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    d = fixtures / family
    shutil.rmtree(d, ignore_errors=True)
    base = d / "base"
    # the dense base is saved in shards so the merge crosses shard edges
    model.save_pretrained(base, max_shard_size="40KB" if family == "qwen3" else "50MB")
    ckpt = d / "checkpoint"
    ckpt.mkdir(parents=True)
    save_file(tinker_adapter(config, family, gen), str(ckpt / "adapter_model.safetensors"), metadata={"format": "pt"})
    (ckpt / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": hub_name, "r": RANK, "lora_alpha": ALPHA}, indent=2) + "\n")
    (ckpt / "checkpoint_complete").write_text("")
    bases = {"base": base}
    if family == "qwen3_moe":
        # experts fused on disk, as transformers 5 holds them (and Qwen3.5/3.6 MoE checkpoints store them)
        fused = d / "base-fused"
        fused.mkdir()
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(fused / "model.safetensors"), metadata={"format": "pt"})
        for f in ("config.json", "generation_config.json"):
            shutil.copy(base / f, fused / f)
        bases["base-fused"] = fused
    if family == "qwen3":
        # the same weights in bf16: the merge adds in fp32 and rounds to bf16 once
        bf = d / "base-bf16"
        model.to(torch.bfloat16).save_pretrained(bf)
        model.to(torch.float32)
        bases["base-bf16"] = bf

    result: dict = {"hub_name": hub_name, "bases": {}}
    adapter_out = work / f"{family}-adapter"
    cli("adapter", str(ckpt), "--base", str(base), "--output", str(adapter_out))
    for label, b in bases.items():
        merged_out = work / f"{family}-{label}-merged"
        cli("merge", str(ckpt), "--base", str(b), "--output", str(merged_out))
        ours = shard_tensors(merged_out)
        base_model = AutoModelForCausalLM.from_pretrained(b, dtype=torch.float32)
        peft_model = PeftModel.from_pretrained(base_model, adapter_out)
        entry: dict = {}
        if label != "base-bf16":
            ours_model = AutoModelForCausalLM.from_pretrained(merged_out, dtype=torch.float32)
            diff = (logits(peft_model) - logits(ours_model)).abs().max().item()
            assert diff <= 1e-5, f"{family}/{label}: PEFT's logits differ from our merged model's by {diff}"
            entry["logits_max_abs_diff"] = diff
            peft_merged = peft_model.merge_and_unload()
            saved = work / f"{family}-{label}-peft-merged"
            if label == "base-fused":
                expected = {k: v.contiguous() for k, v in peft_merged.state_dict().items()}
            else:
                peft_merged.save_pretrained(saved)
                expected = shard_tensors(saved)
        else:
            # bf16: W + delta added in fp32 (PEFT's fp32 delta of each LoRA module), rounded once
            raw = shard_tensors(b)
            expected = dict(raw)
            for name, module in peft_model.named_modules():
                if isinstance(module, peft.tuners.lora.Linear):
                    key = name.removeprefix("base_model.model.") + ".weight"
                    expected[key] = (raw[key].float() + module.get_delta_weight("default")).to(torch.bfloat16)
        assert set(expected) == set(ours), f"{family}/{label}: tensor names differ: {sorted(set(expected) ^ set(ours))}"
        changed = 0
        for k, v in expected.items():
            assert v.dtype == ours[k].dtype and v.shape == ours[k].shape, f"{family}/{label}: {k} {v.dtype}{tuple(v.shape)} vs ours {ours[k].dtype}{tuple(ours[k].shape)}"
            assert torch.equal(v, ours[k]), f"{family}/{label}: {k} differs (max {(v.float() - ours[k].float()).abs().max().item()})"
        base_raw = shard_tensors(b)
        for k in expected:
            changed += 0 if torch.equal(base_raw[k], expected[k]) else 1
        entry["tensors"] = {k: sha(v) for k, v in sorted(expected.items())}
        entry["changed"] = changed
        result["bases"][label] = entry
        print(f"{family}/{label}: {len(expected)} tensors bit-exact ({changed} changed by the merge)"
              + (f", logits max abs diff {entry['logits_max_abs_diff']:.3g}" if "logits_max_abs_diff" in entry else ""))
    return result


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "test/fixtures/export"))
    a = ap.parse_args()
    fixtures = Path(a.out)
    fixtures.mkdir(parents=True, exist_ok=True)
    goldens = {"versions": {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
                            "safetensors": safetensors.__version__, "python": sys.version.split()[0]},
               "rank": RANK, "alpha": ALPHA, "families": {}}
    with tempfile.TemporaryDirectory() as work:
        for seed, family in enumerate(("qwen3", "qwen3_moe", "llama_tied")):
            goldens["families"][family] = make_family(family, fixtures, Path(work), seed + 1)
    (fixtures / "goldens.json").write_text(json.dumps(goldens, indent=1) + "\n")
    print(f"wrote {fixtures / 'goldens.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
