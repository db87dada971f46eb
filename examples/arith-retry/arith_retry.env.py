# A second chance: a wrong answer gets the engine's "wrong, try again" phrase and one more attempt.
# Reward 1 on the first try, 0.5 on the second, 0 otherwise. The user phrases are arith-chat's
# pretraining phrases, verbatim (docs/engine.md): "What is 47 + 85?" and "Wrong, try again."


class ArithRetry:
    def __init__(self, problem):
        self.x = int(problem["x"])
        self.y = int(problem["y"])
        self.tries = 0
        self.messages = []

    def initial_observation(self):
        self.messages = [{"role": "user", "content": "What is %d + %d?" % (self.x, self.y)}]
        return self.messages

    def step(self, message):
        self.tries += 1
        right = message["content"].strip() == str(self.x + self.y)
        if right or self.tries == 2:
            reward = (1.0 if self.tries == 1 else 0.5) if right else 0.0
            return {
                "reward": reward,
                "episode_done": True,
                "metrics": {"first_try_correct": float(right and self.tries == 1), "second_try_correct": float(right and self.tries == 2)},
            }
        self.messages = self.messages + [message, {"role": "user", "content": "Wrong, try again."}]
        return {"reward": 0.0, "episode_done": False, "next_messages": self.messages}
