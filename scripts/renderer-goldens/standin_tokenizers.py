"""Builds the stand-in tokenizers for the model families whose real tokenizers are not available
offline (Qwen3.5 / 3.8, Kimi K2 / K2.5 / K2.6, Nemotron 3): one small byte-level BPE, trained here on
a fixed text, plus each family's special tokens (as the cookbook's renderers and tests name them).
Both the cookbook's Python renderers (goldens) and Tinker Studio's renderers (tests) read these
files, so the rendering logic is compared token for token without the real vocabulary.

    python scripts/renderer-goldens/standin_tokenizers.py   # writes test/fixtures/tokenizers/<family>-standin/

Needs the `tokenizers` package (the cookbook environment has it). Deterministic: same files each run.
"""

import json
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

OUT = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "tokenizers"

# Qwen's pre-tokenizer regex, so the stand-in splits text (digits, newline runs, spaces) as Qwen does.
SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"

CORPUS = [
    "You are a helpful assistant. The user asks a question and the assistant answers it.",
    "What is 2+2? The answer is 4. Let me think about this step by step before I answer.",
    "Hello! How can I help you today? Count to three: 1, 2, 3. Thank you, goodbye.",
    "Get the current weather for a city. City name. The temperature is 18 degrees in Paris.",
    "# Tools\n\nYou have access to the following functions:\n\n<tools>\n</tools>\n\n",
    "If you choose to call a function ONLY reply in the following format with NO suffix:\n\n",
    "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n",
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}',
    '{"type": "function", "function": {"name": "add", "description": "Add two numbers"}}',
    "Reasoning effort is set to low. Keep your thinking brief and focused.",
    "Required parameters MUST be specified. You may provide optional reasoning for your function call.",
    "\n\n\n  \t  \n", "    indented text\n        more indented\n",
    "Système héllo 世界 Ça va ✓ 🎉 naïve café résumé",
    "functions.get_weather:0 ## Return of call_1 the result of the tool call",
]

# family → special tokens, as (content, special) in id order after the base vocabulary
FAMILIES = {
    # Qwen3.5 / 3.8 share Qwen3's chat and tool tokens (the <think>/<tool_call> family non-special)
    "qwen3_5": [
        ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
        ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|image_pad|>", True), ("<|video_pad|>", True),
        ("<tool_call>", False), ("</tool_call>", False), ("<tool_response>", False), ("</tool_response>", False),
        ("<think>", False), ("</think>", False),
    ],
    "kimi": [
        ("[BOS]", True), ("[EOS]", True), ("<|im_end|>", True), ("<|im_user|>", True), ("<|im_assistant|>", True),
        ("<|im_system|>", True), ("<|im_middle|>", True),
        ("<|tool_calls_section_begin|>", True), ("<|tool_calls_section_end|>", True),
        ("<|tool_call_section_begin|>", True), ("<|tool_call_section_end|>", True),
        ("<|tool_call_begin|>", True), ("<|tool_call_argument_begin|>", True), ("<|tool_call_end|>", True),
        ("<think>", True), ("</think>", True),
        ("<|media_begin|>", True), ("<|media_content|>", True), ("<|media_end|>", True),
    ],
    "nemotron3": [
        ("<s>", True), ("</s>", True), ("<|im_start|>", True), ("<|im_end|>", True),
        ("<think>", True), ("</think>", True), ("<tool_call>", True), ("</tool_call>", True),
        ("<tool_response>", True), ("</tool_response>", True),
    ],
}
EOS = {"qwen3_5": "<|im_end|>", "kimi": "[EOS]", "nemotron3": "<|im_end|>"}
BOS = {"kimi": "[BOS]", "nemotron3": "<s>"}


def base() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(
        vocab_size=700, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[],
    )
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    return tok


def main() -> None:
    text = base().to_str()
    for family, specials in FAMILIES.items():
        data = json.loads(text)
        next_id = len(data["model"]["vocab"])
        data["added_tokens"] = [
            {"id": next_id + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": s}
            for i, (c, s) in enumerate(specials)
        ]
        d = OUT / f"{family}-standin"
        d.mkdir(parents=True, exist_ok=True)
        (d / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        config = {
            "comment": f"stand-in tokenizer for {family} (not the model's vocabulary): see scripts/renderer-goldens/standin_tokenizers.py",
            "tokenizer_class": "PreTrainedTokenizerFast",
            "clean_up_tokenization_spaces": False,
            "eos_token": EOS[family],
            "bos_token": BOS.get(family),
        }
        (d / "tokenizer_config.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
        print(f"{d}: {next_id + len(specials)} tokens")


if __name__ == "__main__":
    main()
