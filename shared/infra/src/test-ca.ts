import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export interface TestCa {
  caFile: string;
  /** For 127.0.0.1 and localhost. */
  server: { certFile: string; keyFile: string };
  client: { certFile: string; keyFile: string };
}

async function openssl(dir: string, args: string[]): Promise<void> {
  await exec('openssl', args, { cwd: dir });
}

/** Signs a key pair for `name` with the CA (one day; the SANs only when given). */
async function issue(dir: string, name: string, extensions: string): Promise<{ certFile: string; keyFile: string }> {
  const keyFile = path.join(dir, `${name}.key`);
  const certFile = path.join(dir, `${name}.crt`);
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  await writeFile(ext, extensions);
  await openssl(dir, ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-subj', `/CN=${name}`, '-out', csr]);
  await openssl(dir, [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    ext,
    '-out',
    certFile,
  ]);
  return { certFile, keyFile };
}

/** A throwaway CA in `dir` with a server certificate for the loopback address and a client certificate (openssl). */
export async function createTestCa(dir: string): Promise<TestCa> {
  await openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=brokkr-test-ca',
  ]);
  const server = await issue(dir, 'server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  const client = await issue(dir, 'client', 'extendedKeyUsage=clientAuth\n');
  return { caFile: path.join(dir, 'ca.crt'), server, client };
}
