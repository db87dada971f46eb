// The README's pictures as a marketplace shows them. VS Code's extension details page draws https
// images only, so a VSIX whose README links its pictures relatively shows their alt text; vsce makes
// the links absolute from package.json's `repository` or README_IMAGES_URL (scripts/package.mjs).
// This machine reaches no public host, so the UI test of the details page packages the extension with
// README_IMAGES_URL set to a local https server of this checkout's files (a throw-away self-signed
// certificate; the test's browser context accepts it) and checks that every picture loads.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { root } from './code-server.mjs';

const TYPES = { '.jpg': 'image/jpeg', '.png': 'image/png', '.svg': 'image/svg+xml', '.gif': 'image/gif' };

/** A self-signed certificate for 127.0.0.1, made by openssl into `dir` (Debian's openssl package; `npm run setup` installs it). */
function selfSignedCertificate(dir) {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  const r = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert],
    { encoding: 'utf8' },
  );
  if (r.error || r.status !== 0) throw new Error(`openssl could not make a test certificate (apt-get install openssl): ${r.error?.message ?? r.stderr}`);
  return { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
}

/**
 * Serves this checkout's image files (media/…) over https on 127.0.0.1 and packages a VSIX whose README
 * links them there. Returns { vsix, imagesUrl, close }.
 */
export async function packageWithServedImages(log) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tinker-readme-images-'));
  const server = https.createServer(selfSignedCertificate(tmp), (req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? '/', 'https://127.0.0.1').pathname).replace(/^\/+/, '');
    const file = path.resolve(root, rel);
    const type = TYPES[path.extname(file).toLowerCase()];
    if (req.method !== 'GET' || !type || !file.startsWith(path.join(root, 'media') + path.sep) || !fs.existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': type, 'access-control-allow-origin': '*' }).end(fs.readFileSync(file));
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const imagesUrl = `https://127.0.0.1:${server.address().port}/`;
  const vsix = path.join(tmp, 'readme-images.vsix');
  log(`packaging ${path.basename(vsix)} with README_IMAGES_URL=${imagesUrl}`);
  const r = spawnSync(process.execPath, [path.join(root, 'scripts/package.mjs'), '-o', vsix], {
    cwd: root,
    env: { ...process.env, README_IMAGES_URL: imagesUrl },
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    server.close();
    throw new Error(`npm run package with README_IMAGES_URL failed:\n${(r.stdout + r.stderr).slice(-2000)}`);
  }
  return {
    vsix,
    imagesUrl,
    close: async () => {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(() => resolve()));
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}
