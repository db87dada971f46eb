// The arithmetic chats the embedded engine's models were pretrained on: the exact user phrases, the
// calculator tool, the holdout, and one builder per format. scripts/pretrain-arith-chat.mjs trains
// `tinker-studio/arith-chat` on `arithEpisode` rendered by `renderArithEpisode` (the chatml renderer),
// and the tests check the renderer gives exactly those tokens; environments that want the model to
// recognise a turn use these phrases verbatim (docs/engine.md lists them).
import type { ChatMessage, ToolSpec } from '../../protocol/chatMessage';
import { toolCall, toolSystemMessage } from '../render/chatmlTools';
import type { Renderer, SupervisedExample, TrainOnWhat } from '../render/types';

/** The user phrases and the system prompt, verbatim. */
export const ARITH_PHRASES = {
  /** a question: `What is 47 + 85?` */
  question: (x: number, y: number): string => `What is ${x} + ${y}?`,
  /** a follow-up that builds on the assistant's previous answer: `Now add 17.` */
  followUp: (z: number): string => `Now add ${z}.`,
  /** the user's reply to a wrong answer */
  wrong: 'Wrong, try again.',
  /** the system prompt of the single-turn format that has one */
  systemPrompt: 'Answer with the number only.',
} as const;

/** The calculator tool `add(a, b)`; declared as `Tools: add(a, b) - Add two integers.` */
export const CALCULATOR_TOOL: ToolSpec = {
  name: 'add',
  description: 'Add two integers.',
  parameters: {
    type: 'object',
    properties: { a: { type: 'integer' }, b: { type: 'integer' } },
    required: ['a', 'b'],
  },
};

/**
 * The arithmetic holdout: the pairs (x, y) pretraining never sees, in any format, and that
 * evaluations use. A hash picks 10 % of the pairs with no digit pattern, so the holdout measures
 * addition learnt, not a digit left out (an earlier rule, (100x + y) mod 10 = 7, held out every y
 * ending in 7 — a digit the model then never saw in that position). Pairs of numbers below 100 keep
 * the key arith-gpt was trained with; larger pairs (up to 9999 each) have keys of their own.
 */
export function isArithHoldout(x: number, y: number): boolean {
  let h = (x < 100 && y < 100 ? x * 100 + y + 1 : 10_001 + x * 10_000 + y) >>> 0;
  // murmur3's 32-bit finaliser
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h % 10 === 0;
}

/** The pretraining formats of arith-chat. */
export const ARITH_FORMATS = ['single', 'single_system', 'chain2', 'chain3', 'feedback', 'tool'] as const;
export type ArithFormat = (typeof ARITH_FORMATS)[number];

/** How often each format is drawn in pretraining (sums to 1). */
export const ARITH_MIXTURE: Readonly<Record<ArithFormat, number>> = {
  single: 0.25,
  single_system: 0.15,
  chain2: 0.15,
  chain3: 0.1,
  feedback: 0.15,
  tool: 0.2,
};

export interface ArithEpisode {
  format: ArithFormat;
  messages: ChatMessage[];
  /** which assistant turns are trained: the last one, or all (chains and tool use) */
  trainOnWhat: Extract<TrainOnWhat, 'last_assistant_message' | 'all_assistant_messages'>;
  /** the additions the episode asks for, in order (the sum each answer must give) */
  sums: Array<[number, number]>;
}

/** A random integer in lo..hi. */
function int(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

/** A pair drawn until it is (holdout) or is not (training) in the holdout. */
function pair(rand: () => number, lo: number, hi: number, holdout: boolean): [number, number] {
  for (;;) {
    const x = int(rand, lo, hi);
    const y = int(rand, lo, hi);
    if (isArithHoldout(x, y) === holdout) return [x, y];
  }
}

/** A follow-up operand z for a running total, drawn until (total, z) is (or is not) in the holdout. */
function followUpOperand(rand: () => number, total: number, holdout: boolean): number {
  for (;;) {
    const z = int(rand, 1, 99);
    if (isArithHoldout(total, z) === holdout) return z;
  }
}

/** A plausible wrong answer to x + y: off by one, two or ten most of the time, else any other number. */
export function wrongAnswer(rand: () => number, x: number, y: number): number {
  const right = x + y;
  for (;;) {
    const near = rand() < 0.7;
    const deltas = [-10, -2, -1, 1, 2, 10];
    const w = near ? right + deltas[Math.floor(rand() * deltas.length)]! : int(rand, 0, 2 * Math.max(99, right));
    if (w !== right && w >= 0) return w;
  }
}

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

/**
 * One episode of `format`, from `rand`. Training draws `holdout: false` (every addition in it is a
 * training pair); evaluation draws `holdout: true` (every addition is a holdout pair). Tool use asks
 * for three- or four-digit sums (half each), the other formats for numbers below 100.
 */
export function arithEpisode(format: ArithFormat, rand: () => number, holdout: boolean, opts: { toolDigits?: 3 | 4 } = {}): ArithEpisode {
  switch (format) {
    case 'single':
    case 'single_system': {
      const [x, y] = pair(rand, 0, 99, holdout);
      const messages = [user(ARITH_PHRASES.question(x, y)), assistant(String(x + y))];
      if (format === 'single_system') messages.unshift({ role: 'system', content: ARITH_PHRASES.systemPrompt });
      return { format, messages, trainOnWhat: 'last_assistant_message', sums: [[x, y]] };
    }
    case 'chain2':
    case 'chain3': {
      const [x, y] = pair(rand, 0, 99, holdout);
      let total = x + y;
      const sums: Array<[number, number]> = [[x, y]];
      const messages = [user(ARITH_PHRASES.question(x, y)), assistant(String(total))];
      for (let turn = 1; turn < (format === 'chain2' ? 2 : 3); turn++) {
        const z = followUpOperand(rand, total, holdout);
        sums.push([total, z]);
        total += z;
        messages.push(user(ARITH_PHRASES.followUp(z)), assistant(String(total)));
      }
      return { format, messages, trainOnWhat: 'all_assistant_messages', sums };
    }
    case 'feedback': {
      const [x, y] = pair(rand, 0, 99, holdout);
      const messages = [user(ARITH_PHRASES.question(x, y)), assistant(String(wrongAnswer(rand, x, y))), user(ARITH_PHRASES.wrong), assistant(String(x + y))];
      // only the second attempt is trained: the wrong answer is context
      return { format, messages, trainOnWhat: 'last_assistant_message', sums: [[x, y]] };
    }
    case 'tool': {
      const digits = opts.toolDigits ?? (rand() < 0.5 ? 3 : 4);
      const [x, y] = pair(rand, 10 ** (digits - 1), 10 ** digits - 1, holdout);
      const call: ChatMessage = { role: 'assistant', content: '', tool_calls: [toolCall(CALCULATOR_TOOL.name, { a: x, b: y })] };
      const messages = [toolSystemMessage([CALCULATOR_TOOL]), user(ARITH_PHRASES.question(x, y)), call, { role: 'tool' as const, name: CALCULATOR_TOOL.name, content: String(x + y) }, assistant(String(x + y))];
      return { format, messages, trainOnWhat: 'all_assistant_messages', sums: [[x, y]] };
    }
  }
}

/**
 * A format drawn by the pretraining mixture, or by `mixture` (weights that need not sum to 1; the
 * pretraining script pauses a format that is accurate enough by giving it weight 0).
 */
export function drawArithFormat(rand: () => number, mixture: Readonly<Record<ArithFormat, number>> = ARITH_MIXTURE): ArithFormat {
  const total = ARITH_FORMATS.reduce((a, f) => a + mixture[f], 0);
  if (!(total > 0)) throw new Error('the mixture gives every format weight 0');
  let u = rand() * total;
  for (const f of ARITH_FORMATS) {
    u -= mixture[f];
    if (u < 0) return f;
  }
  return ARITH_FORMATS[ARITH_FORMATS.length - 1]!;
}

/** The one way an episode becomes training tokens: the renderer's supervised example. */
export function renderArithEpisode(renderer: Renderer, episode: ArithEpisode): SupervisedExample {
  return renderer.buildSupervisedExample(episode.messages, episode.trainOnWhat);
}
