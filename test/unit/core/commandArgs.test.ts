// Command arguments are parsed with zod; one a handler cannot use fails naming the command and the argument.
import * as assert from 'assert';
import { CommandArgumentError, commandArg } from '../../../src/vscode/common/commandArgs';

describe('command arguments', () => {
  const answers = ({ z }: typeof import('zod')) => z.strictObject({ ttl: z.string().optional(), confirm: z.boolean().optional() }).optional();

  it('gives back what the schema parses, and undefined when the argument is left out', async () => {
    assert.deepStrictEqual(await commandArg('tinker.checkpoints.setTtl', 'answers', { ttl: '2d' }, answers), { ttl: '2d' });
    assert.strictEqual(await commandArg('tinker.checkpoints.setTtl', 'answers', undefined, answers), undefined);
  });

  it('refuses an argument of the wrong shape with the command, the argument and the field named', async () => {
    await assert.rejects(commandArg('tinker.checkpoints.setTtl', 'answers', { ttl: 5 }, answers), (e: unknown) => {
      assert.ok(e instanceof CommandArgumentError);
      assert.match(e.message, /^tinker\.checkpoints\.setTtl was called with an unusable answers argument: ttl: /);
      return true;
    });
    await assert.rejects(commandArg('tinker.checkpoints.delete', 'answers', { confirm: true, force: true }, answers), /tinker\.checkpoints\.delete was called with an unusable answers argument: .*force/);
    await assert.rejects(commandArg('tinker.showModels', 'options', 'quiet', ({ z }) => z.strictObject({ quiet: z.boolean() }).optional()), CommandArgumentError);
  });
});
