"""Reward of the SFT -> GRPO example: 1.0 only for a reply of the form "<sum>!" with the right sum.

The base model answers with the bare sum ("46"), which scores 0 here: every group is constant, so
GRPO from the base model has no signal. SFT on chats.jsonl teaches the closing "!" first; GRPO from
that checkpoint then has mixed groups and improves the sums.
"""
import re

_FORMAT = re.compile(r"^(-?\d+)!$")


def compute_reward(completion: str, ground_truth: str) -> float:
    m = _FORMAT.match(completion.strip())
    if m is None:
        return 0.0
    return 1.0 if int(m.group(1)) == int(ground_truth) else 0.0
