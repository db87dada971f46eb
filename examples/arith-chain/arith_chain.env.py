# A chain: turn 2 asks, in the engine's follow-up phrase, to add a third number to the model's own
# answer. Reward only at the end: 1 when the final answer is x + y + z. The user phrases are
# arith-chat's pretraining phrases, verbatim (docs/engine.md): "What is 47 + 85?" and "Now add 17."


class ArithChain:
    def __init__(self, problem):
        self.x = int(problem["x"])
        self.y = int(problem["y"])
        self.z = int(problem["z"])
        self.turn = 0
        self.messages = []

    def initial_observation(self):
        self.messages = [{"role": "user", "content": "What is %d + %d?" % (self.x, self.y)}]
        return self.messages

    def step(self, message):
        self.turn += 1
        answer = message["content"].strip()
        if self.turn == 1:
            self.first_correct = float(answer == str(self.x + self.y))
            self.messages = self.messages + [message, {"role": "user", "content": "Now add %d." % self.z}]
            return {"reward": 0.0, "episode_done": False, "next_messages": self.messages}
        correct = float(answer == str(self.x + self.y + self.z))
        return {"reward": correct, "episode_done": True, "metrics": {"first_correct": self.first_correct, "correct": correct}}
