import { expect } from 'chai';
import fs from 'node:fs';
import { ENV_TABLE_FILE, withEnvTable } from '../scripts/env-docs.ts';
import { firstDeploymentScript } from '../scripts/lib/first-deployment.ts';

describe('README', () => {
  const readme = fs.readFileSync('README.md', 'utf8');

  it('docs/configuration.md lists every environment variable the services accept (regenerate with scripts/env-docs.ts --write)', () => {
    const configuration = fs.readFileSync(ENV_TABLE_FILE, 'utf8');
    expect(withEnvTable(configuration)).to.equal(configuration);
  });

  it('stays a first screen and a tour (under 250 lines), and every link to a file in the repository resolves', () => {
    expect(readme.split('\n').length).to.be.at.most(250);
    const docs: [string, string][] = [
      ['README.md', readme],
      ...fs
        .readdirSync('docs')
        .filter((f) => f.endsWith('.md'))
        .map((f): [string, string] => [`docs/${f}`, fs.readFileSync(`docs/${f}`, 'utf8')]),
    ];
    for (const [doc, text] of docs) {
      const base = doc.includes('/') ? 'docs/' : '';
      for (const [, target] of text.matchAll(/\]\(((?!https?:|#|mailto:)[^)#\s]+)(?:#[^)]*)?\)/g))
        expect(fs.existsSync(`${base}${target}`), `${doc} links to ${target}`).to.equal(true);
    }
  });

  it('docs/benchmarks.md lists every bench:* script with what it measures, and every script points at a file that exists', () => {
    const benchmarks = fs.readFileSync('docs/benchmarks.md', 'utf8');
    const scripts = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const [name, command] of Object.entries(scripts).filter(([n]) => n === 'bench' || n.startsWith('bench:'))) {
      if (name !== 'bench')
        expect(benchmarks, `docs/benchmarks.md row for ${name}`).to.match(new RegExp(`\\| \`npm run ${name}\` \\| \\S`));
      const file = /\S+\.ts\b/.exec(command)?.[0];
      expect(file && fs.existsSync(file), `${name} runs ${file}`).to.equal(true);
    }
  });

  it('has a "First deployment" section whose steps match what npm start prints', () => {
    const section = /^## First deployment in two minutes\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
    const printed = firstDeploymentScript({
      apiUrl: 'URL',
      adminPak: 'ADMIN',
      generator: { id: 'GEN', pak: 'GENPAK' },
      agent: { id: 'AGENT' },
      kube: { server: 'SERVER', token: 'TOKEN', caFile: 'CA', kubeconfigPath: 'KUBECONFIG' },
    });
    // Every comment and command line the script prints appears in the README, up to the placeholders.
    const shape = (line: string) => line.replace(/(URL|ADMIN|GENPAK|GEN|AGENT|SERVER|TOKEN|CA|KUBECONFIG)\b/g, '').replace(/\s+/g, ' ');
    const documented = section.split('\n').map((l) => l.replace(/brokkr_BR…|<[^>]+>|\/tmp\/\S+|http\S+/g, ''));
    for (const line of printed.split('\n').filter((l) => l.startsWith('#'))) {
      expect(documented.map(shape), line).to.include(shape(line.replace(/\/tmp\/\S+|http\S+/g, '')));
    }
  });

  it('gives the two commands, and CI runs exactly the test command', () => {
    expect(readme).to.include('npm ci && npm start');
    expect(readme).to.include('npm ci && npm test');
    expect(fs.readFileSync('.ci/run', 'utf8')).to.match(/^npm test$/m);
  });
});
