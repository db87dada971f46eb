"""Reward for the arithmetic example: 1.0 when the answer is right, else 0.0.

Tinker Studio calls compute_reward(completion, ground_truth) once per sampled completion:
  completion    the model's reply, with the stop sequence (<|im_end|>) already removed
  ground_truth  the "answer" field of the problem's line in train.jsonl / holdout.jsonl, as a string
It must return a float. An exception scores 0 and is reported with its traceback; the run goes on.
"""
import re

# An optional minus sign and digits: the last such number in the reply is taken as the answer,
# as the tinker-cookbook's arithmetic environment does (commas are removed first: "1,234" -> 1234).
_INTEGER = re.compile(r"-?\d+")


def compute_reward(completion: str, ground_truth: str) -> float:
    numbers = _INTEGER.findall(completion.replace(",", ""))
    if not numbers:
        return 0.0  # no number at all: nothing to check
    return 1.0 if int(numbers[-1]) == int(ground_truth) else 0.0
