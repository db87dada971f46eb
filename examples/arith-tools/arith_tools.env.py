# Three-digit sums with the calculator tool: the environment declares add(a, b) (the run's renderer
# writes the declaration: chatml's compact "Tools: add(a, b) - Add two integers." line), answers each
# call with the sum as a tool message, and rewards a final answer equal to the sum. A call that does
# not parse is answered with an error (the spec sets terminate_on_parse_error false, so the run adds
# failed_parse_reward and the episode goes on). The user phrase is arith-chat's, verbatim
# (docs/engine.md): "What is 123 + 456?"
import json

CALCULATOR = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
}


class ArithTools:
    def __init__(self, problem):
        self.x = int(problem["x"])
        self.y = int(problem["y"])
        self.calls = 0
        self.parse_errors = 0
        self.messages = []

    def initial_observation(self):
        self.messages = [{"role": "user", "content": "What is %d + %d?" % (self.x, self.y)}]
        return {"messages": self.messages, "tools": [CALCULATOR]}

    def step(self, message):
        replies = []
        for call in message.get("tool_calls") or []:
            self.calls += 1
            try:
                args = json.loads(call["function"]["arguments"])
                result = str(int(args["a"]) + int(args["b"])) if call["function"]["name"] == "add" else "error: unknown tool"
            except (KeyError, TypeError, ValueError) as e:
                result = "error: %s" % e
            replies.append({"role": "tool", "name": "add", "content": result})
        for bad in message.get("unparsed_tool_calls") or []:
            self.parse_errors += 1
            replies.append({"role": "tool", "name": "add", "content": "error: %s" % bad["error"]})
        if replies:
            self.messages = self.messages + [message] + replies
            return {"reward": 0.0, "episode_done": False, "next_messages": self.messages}
        correct = float(message["content"].strip() == str(self.x + self.y))
        return {
            "reward": correct,
            "episode_done": True,
            "metrics": {"tool_call_rate": float(self.calls > 0), "tool_parse_errors": float(self.parse_errors), "correct": correct},
        }
