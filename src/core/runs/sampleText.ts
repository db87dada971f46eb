// A sample as readable text for the diff editor: a header (run, iteration, group, sample, reward,
// advantage, stop reason, tokens, reward error), then the prompt and the completion. Two samples'
// texts diff line by line, so the header's values line up. An environment episode's text is its
// transcript instead, turn by turn (`## turn N`), so that two episodes diff turn against turn.
import { recordMessage, type SampleRecord } from '../../protocol/sampleSchema';
import { hasStructure, messageText } from '../../protocol/messageFormat';
import { episodeText } from '../../protocol/episodeView';

/**
 * The `## parsed reply` section of a sample's document when its completion had reasoning or tool
 * calls (the renderer's parse: thinking, then the answer, then each call's name and pretty JSON);
 * nothing for a plain answer (the completion says it all).
 */
export function parsedReplyLines(s: Pick<SampleRecord, 'content' | 'thinking' | 'tool_calls' | 'unparsed_tool_calls'>): string[] {
  const m = recordMessage(s);
  return hasStructure(m) ? ['', '## parsed reply', messageText(m)] : [];
}

export interface SampleAddress {
  runDir: string;
  iteration: number;
  split: 'train' | 'eval';
  groupIdx: number;
  trajIdx: number;
}

export function sampleText(a: SampleAddress, s: SampleRecord): string {
  const lines = [
    `# ${a.split === 'train' ? 'training' : 'holdout evaluation'} iteration ${a.iteration} · group ${a.groupIdx} · sample ${a.trajIdx}`,
    `problem:      ${s.problem_id}`,
    `reward:       ${s.reward}`,
    `advantage:    ${s.advantage > 0 ? '+' : ''}${s.advantage}`,
    `stop reason:  ${s.stop_reason} (${s.termination})`,
    `tokens:       ${s.completion_tokens.length}`,
    `ground truth: ${s.ground_truth}`,
  ];
  if (s.reward_error) lines.push(`reward error: ${s.reward_error.kind}: ${s.reward_error.message}${s.reward_error.line ? ` (line ${s.reward_error.line})` : ''}`);
  if (s.transcript) lines.push('', ...episodeText(s.transcript), '');
  else lines.push('', '## prompt', s.prompt.replace(/\n$/, ''), '', '## completion', s.completion, ...parsedReplyLines(s), '');
  return lines.join('\n');
}
