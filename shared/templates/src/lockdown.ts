import { registerHooks } from 'node:module';

/**
 * What a renderer process removes from its own reach once its code is loaded and before it
 * takes a job (sandbox.ts starts it under the permission model, which covers the filesystem,
 * processes, threads and addons but not the network in Node 24): the modules that open
 * connections or resolve names, the network globals, and `process.binding`. After this a
 * template that found a way to run JavaScript could compute, and nothing else.
 */

// `module` too: a resolve hook registered after ours would run first and could resolve around it.
const DENIED = new Set(
  [
    'module',
    'v8',
    'os',
    'net',
    'tls',
    'http',
    'https',
    'http2',
    'dgram',
    'dns',
    'dns/promises',
    'child_process',
    'cluster',
    'worker_threads',
    'inspector',
  ].flatMap((name) => [name, `node:${name}`]),
);

const NETWORK_GLOBALS = ['fetch', 'WebSocket', 'EventSource', 'Request', 'Response', 'Headers', 'FormData'];

function refused(name: string): Error {
  return Object.assign(new Error(`${name} is not available in the template renderer`), { code: 'ERR_ACCESS_DENIED' });
}

export function lockdown(): void {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      if (DENIED.has(specifier)) throw refused(specifier);
      return nextResolve(specifier, context);
    },
  });
  const getBuiltinModule = process.getBuiltinModule.bind(process);
  const guarded = (id: string): unknown => {
    if (DENIED.has(id)) throw refused(id);
    return getBuiltinModule(id);
  };
  Object.defineProperty(process, 'getBuiltinModule', { value: guarded, writable: false, configurable: false });
  Object.defineProperty(process, 'binding', {
    value: () => {
      throw refused('process.binding');
    },
    writable: false,
    configurable: false,
  });
  for (const name of NETWORK_GLOBALS) Reflect.deleteProperty(globalThis, name);
}
