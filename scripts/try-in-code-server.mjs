#!/usr/bin/env node
// `npm run try`: installs the packaged VSIX into a fresh code-server profile and serves the workbench
// on 127.0.0.1 so a person can try the extension in a browser. Ctrl-C stops it.
//   PORT=<n> (default: a free port)  FOLDER=<dir> (default: a copy of the test fixture workspace)
//   CODE_SERVER_HOST=floor|newest (default newest: VS Code 1.139; floor: VS Code 1.96)
import fs from 'node:fs';
import path from 'node:path';
import { createSandbox, findVsix, installVsix, makeLogger, resolveCodeServer, root, startCodeServer, workbenchUrl } from './lib/code-server.mjs';

const { log } = makeLogger('try');
const cs = resolveCodeServer(process.env.CODE_SERVER_HOST || 'newest');
const sandbox = createSandbox('tinker-try-');
let folder = process.env.FOLDER && path.resolve(process.env.FOLDER);
if (!folder) {
  folder = path.join(sandbox.tmp, 'workspace');
  fs.cpSync(path.join(root, 'test/fixtures/workspace'), folder, { recursive: true });
}
installVsix(cs, sandbox, findVsix());
const server = await startCodeServer(cs, sandbox, { port: process.env.PORT ? Number(process.env.PORT) : undefined });
log(`Tinker Studio is installed. Open this in a browser:\n\n  ${workbenchUrl(server.base, folder)}\n\nCtrl-C to stop.`);
const stop = async () => {
  await server.stop();
  fs.rmSync(sandbox.tmp, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
