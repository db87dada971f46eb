# Guess the number: the tinker-cookbook's multi-turn game (recipes/multiplayer_rl/guess_number), as a
# Tinker Studio environment. The model looks for a secret integer from 0 to 1023 (the dataset line's
# "answer"); each reply must be one line "Guess: N". After each guess the user says whether it was too
# low, too high or correct; the game ends on the right number or after 10 guesses.
# Rewards, per guess (as the cookbook's): 1 for the right number, 0 for a wrong one, -1 for a reply
# that is not a readable guess (the game goes on after it, with a reminder of the format).
# Each step's logs (not aggregated) hold the guess, the feedback and the target, as the cookbook's.
import re

UPPER_BOUND = 1024  # the secret is in range(UPPER_BOUND)
MAX_GUESSES = 10
FORMAT_PENALTY = -1.0

# Short on purpose: the same file runs on the embedded engine's 256-position model, where every byte
# of the conversation is a token.
SYSTEM_PROMPT = "Find my secret integer from 0 to %d. Reply only with: Guess: N. I say Too low, Too high or Correct." % (UPPER_BOUND - 1)
FORMAT_REMINDER = "Reply only with: Guess: N"
TOO_LOW = "Too low."
TOO_HIGH = "Too high."
CORRECT = "Correct."

# "Guess:" then an integer, on the reply's first line (the rest of the reply is ignored, as the
# cookbook's line match does)
GUESS = re.compile(r"Guess:\s*([+-]?\d+)\s*")


def read_guess(text):
    """The integer a reply guesses, or None when its first line is not "Guess: N"."""
    lines = text.strip().splitlines()
    match = GUESS.fullmatch(lines[0]) if lines else None
    return int(match.group(1)) if match else None


class GuessNumber:
    def __init__(self, problem):
        self.answer = int(problem["answer"])
        self.guesses = 0
        self.messages = []

    def initial_observation(self):
        self.messages = [{"role": "system", "content": SYSTEM_PROMPT}]
        return self.messages

    def step(self, message):
        self.guesses += 1
        text = message["content"]
        guess = read_guess(text)
        if guess is None:
            feedback, reward = FORMAT_REMINDER, FORMAT_PENALTY
        elif guess == self.answer:
            feedback, reward = CORRECT, 1.0
        elif guess < self.answer:
            feedback, reward = TOO_LOW, 0.0
        else:
            feedback, reward = TOO_HIGH, 0.0
        done = reward == 1.0 or self.guesses >= MAX_GUESSES
        self.messages = self.messages + [message, {"role": "user", "content": feedback}]
        result = {
            "reward": reward,
            "episode_done": done,
            "logs": {"guess": text, "feedback": feedback, "target": self.answer},
        }
        if not done:
            result["next_messages"] = self.messages
        return result
