// The README.md of an exported adapter or merged model: Hugging Face YAML front matter (base_model,
// library_name, pipeline_tag, tags) and sections saying what it is, how to load it and where it came from.

export interface ModelCardInput {
  kind: 'adapter' | 'merged';
  /** the base model's hub id */
  baseModel: string;
  /** the checkpoint's tinker:// path, when known */
  tinkerPath?: string;
  title?: string;
  r: number;
  alpha: number;
  targetModules?: readonly string[];
  /** what the run trained with, one line each (kind, steps, data) */
  training?: readonly string[];
}

/** A YAML scalar that any YAML reader takes as the same string. */
function yamlString(s: string): string {
  return /^[A-Za-z0-9_./:@+-]+$/.test(s) && !/^(true|false|null|yes|no|~)$/i.test(s) && !/^[-+.\d]/.test(s) ? s : JSON.stringify(s);
}

export function modelCard(c: ModelCardInput): string {
  const adapter = c.kind === 'adapter';
  const tags = adapter ? ['tinker', 'peft', 'lora', `base_model:adapter:${c.baseModel}`] : ['tinker', 'lora-merged', `base_model:finetune:${c.baseModel}`];
  const front = [
    '---',
    `base_model: ${yamlString(c.baseModel)}`,
    `library_name: ${adapter ? 'peft' : 'transformers'}`,
    'pipeline_tag: text-generation',
    'tags:',
    ...tags.map((t) => `- ${yamlString(t)}`),
    ...(c.tinkerPath ? [`tinker_path: ${yamlString(c.tinkerPath)}`] : []),
    '---',
  ];
  const title = c.title ?? (adapter ? `LoRA adapter for ${c.baseModel}` : `${c.baseModel} with a LoRA adapter merged in`);
  const load = adapter
    ? [
        '```python',
        'from transformers import AutoModelForCausalLM, AutoTokenizer',
        'from peft import PeftModel',
        '',
        `base = AutoModelForCausalLM.from_pretrained(${JSON.stringify(c.baseModel)})`,
        'model = PeftModel.from_pretrained(base, "path/to/this/folder")',
        `tokenizer = AutoTokenizer.from_pretrained(${JSON.stringify(c.baseModel)})`,
        '```',
      ]
    : ['```python', 'from transformers import AutoModelForCausalLM', '', 'model = AutoModelForCausalLM.from_pretrained("path/to/this/folder")', '```'];
  const details = [
    `- Base model: ${c.baseModel}`,
    `- LoRA rank ${c.r}, alpha ${c.alpha} (scale alpha/r = ${c.alpha / c.r})`,
    ...(c.targetModules?.length ? [`- Target modules: ${c.targetModules.join(', ')}`] : []),
    ...(c.tinkerPath ? [`- Tinker checkpoint: \`${c.tinkerPath}\``] : []),
    ...(adapter ? [] : ['- Merged as W + (lora_B · alpha/r) @ lora_A, added in fp32 and stored in each tensor\'s original dtype']),
  ];
  return [
    ...front,
    '',
    `# ${title}`,
    '',
    adapter ? 'A LoRA adapter in PEFT format, trained with Tinker and exported by Tinker Studio.' : 'A full model: the base model with a LoRA adapter trained with Tinker merged into its weights, exported by Tinker Studio.',
    '',
    '## Model details',
    '',
    ...details,
    '',
    '## How to use',
    '',
    ...load,
    ...(c.training?.length ? ['', '## Training', '', ...c.training.map((l) => `- ${l}`)] : []),
    '',
  ].join('\n');
}
