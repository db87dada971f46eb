// Adam's settings as the cookbook passes them to optim_step in every kind of run (grpo-reference
// §1.6); the learning rate is each step's own.
export const COOKBOOK_ADAM = { beta1: 0.9, beta2: 0.95, eps: 1e-8 } as const;
