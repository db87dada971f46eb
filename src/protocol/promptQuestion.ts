// The question a rendered prompt asks: the text of its last user turn, with the chat template taken
// off. For views that name a problem by its question (the group breakdown's rows), where a run's
// sample records predate the `question` field. Pure: the webview panels may import it.

/** The question of a problem's conversation: its last user message. */
export function questionOf(messages: readonly { role: string; content: string }[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messages[i]!.content;
  return undefined;
}

/** The turns of the implemented renderers' templates (see chatml.ts, qwen3.ts, llama3.ts, roleColon.ts). */
const USER_TURNS: readonly RegExp[] = [
  // chatml, qwen3: <|im_start|>user\n…<|im_end|>
  /<\|im_start\|>user\n([\s\S]*?)<\|im_end\|>/g,
  // llama3: <|start_header_id|>user<|end_header_id|>\n\n…<|eot_id|>
  /<\|start_header_id\|>user<\|end_header_id\|>\n\n([\s\S]*?)<\|eot_id\|>/g,
  // role_colon: "User: …\n\n" up to the next role's header
  /(?:^|\n\n|>)User: ([\s\S]*?)\n\n(?=(?:System|User|Assistant|Tool):)/g,
];

/** The last user turn of a prompt rendered by one of the implemented templates; undefined when none is recognised. */
export function questionInPrompt(prompt: string): string | undefined {
  for (const turn of USER_TURNS) {
    let last: string | undefined;
    for (const m of prompt.matchAll(turn)) last = m[1];
    if (last !== undefined) return last;
  }
  return undefined;
}
