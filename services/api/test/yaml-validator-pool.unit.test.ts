import { expect } from 'chai';
import { createYamlValidator, YamlValidatorBusy, YamlValidatorClosed, type YamlValidator } from '../src/yaml/index.ts';

const plain = { isDeletionMarker: false };
const anchors = (n: number) => Array.from({ length: n }, (_, i) => `- &a${i} v${i}\n- *a${i}\n`).join('');

describe('api yaml validator pool (worker threads)', () => {
  const pools: YamlValidator[] = [];
  // Everything through the workers (inlineMaxChars: 0, fastPathMaxChars: 0) unless a test says otherwise.
  const pool = (options: Parameters<typeof createYamlValidator>[0] = {}) => {
    const created = createYamlValidator({ inlineMaxChars: 0, fastPathMaxChars: 0, ...options });
    pools.push(created);
    return created;
  };

  after(async () => {
    await Promise.all(pools.map((p) => p.close()));
  });

  it('gives the same verdicts as the validator itself, limits included', async () => {
    const validator = pool({ workers: 2 });
    const [legit, broken, hostile] = await Promise.all([
      validator.validate('a: &x {b: 1}\nc: *x\n---\nkind: Pod\n', plain),
      validator.validate('a: [', plain),
      validator.validate(anchors(32_000), plain),
    ]);
    expect(legit).to.deep.equal({ ok: true });
    expect(broken.ok).to.equal(false);
    expect(hostile).to.deep.include({ ok: false, limit: { limit: 'max_anchors', value: 1000 } });
  });

  it('checks small content inline with the same verdicts (no worker needed), and still refuses once closed', async () => {
    // workers: 1 with maxQueued: 0 refuses anything that would go to a worker.
    const validator = pool({ workers: 1, maxQueued: 0, inlineMaxChars: 64 });
    expect(await validator.validate('a: &x {b: 1}\nc: *x\n', plain)).to.deep.equal({ ok: true });
    expect((await validator.validate('a: [', plain)).ok).to.equal(false);
    expect(await validator.validate('   ', { isDeletionMarker: true })).to.deep.equal({ ok: true });
    await validator.validate(`kind: Pod\nmetadata: {name: ${'x'.repeat(64)}}\n`, plain).then(
      () => expect.fail('content above inlineMaxChars goes to the (full) worker queue'),
      (err: unknown) => expect(err).to.be.instanceOf(YamlValidatorBusy),
    );
    await validator.close();
    await validator.validate('d: 4\n', plain).then(
      () => expect.fail('a closed validator should refuse'),
      (err: unknown) => expect(err).to.be.instanceOf(YamlValidatorClosed),
    );
  });

  it('proves larger plain block-style content valid on the fast path without a worker, and sends the rest to one', async () => {
    // workers: 1 with maxQueued: 0 refuses anything that would go to a worker.
    const validator = pool({ workers: 1, maxQueued: 0, inlineMaxChars: 64, fastPathMaxChars: 4096 });
    const plainBlock = `kind: ConfigMap\ndata:\n${Array.from({ length: 100 }, (_, i) => `  k${i}: "v${i}"`).join('\n')}\n`;
    expect(plainBlock.length).to.be.within(65, 4096);
    expect(await validator.validate(plainBlock, plain)).to.deep.equal({ ok: true });
    // Refusals before parsing are answered on the calling thread too, with the same reasons.
    expect(await validator.validate(`${plainBlock}x: "\u0000"\n`, plain)).to.deep.equal({
      ok: false,
      reason: 'content contains a NUL character',
    });
    const workerBound: [string, string][] = [
      ['a duplicate key', `${plainBlock}  k0: again\n`],
      ['a flow collection', `${plainBlock}  list: [a, b]\n`],
      ['content above fastPathMaxChars', `kind: ConfigMap\ndata:\n  k: v\n${'# padding\n'.repeat(500)}`],
    ];
    for (const [what, content] of workerBound) {
      await validator.validate(content, plain).then(
        () => expect.fail(`${what} goes to the (full) worker queue`),
        (err: unknown) => expect(err, what).to.be.instanceOf(YamlValidatorBusy),
      );
    }
  });

  it('ends a worker that passes its time budget, refuses that content with the limit, and carries on with a new worker', async () => {
    // Large content gets a budget no parse can meet; small content a normal one.
    const validator = pool({ workers: 1, budgetMs: (chars) => (chars > 10_000 ? 1 : 60_000) });
    const slow = await validator.validate(`${'k: v\n---\n'.repeat(5_000)}`, plain);
    expect(slow).to.deep.include({ ok: false, limit: { limit: 'parse_time_ms', value: 1 } });
    if (!slow.ok) expect(slow.reason).to.contain('parse_time_ms');
    expect(await validator.validate('kind: Pod\n', plain)).to.deep.equal({ ok: true });
  });

  it('refuses new work when the queue is full, and rejects everything once closed', async () => {
    const validator = pool({ workers: 1, maxQueued: 1 });
    const running = validator.validate('a: 1\n', plain);
    const queued = validator.validate('b: 2\n', plain);
    await validator.validate('c: 3\n', plain).then(
      () => expect.fail('a third validation should be refused'),
      (err: unknown) => expect(err).to.be.instanceOf(YamlValidatorBusy),
    );
    expect(await running).to.deep.equal({ ok: true });
    expect(await queued).to.deep.equal({ ok: true });
    await validator.close();
    await validator.validate('d: 4\n', plain).then(
      () => expect.fail('a closed validator should refuse'),
      (err: unknown) => expect(err).to.be.instanceOf(YamlValidatorClosed),
    );
  });

  it("queues per tenant: a tenant over its share is refused while another tenant's validation is accepted and served in turn", async () => {
    const validator = pool({ workers: 1, maxQueued: 8, maxQueuedPerTenant: 2 });
    const finished: string[] = [];
    const run = (tenant: string, n: number) =>
      validator.validate(`n: ${n}\n`, plain, tenant).then((verdict) => (finished.push(`${tenant}${n}`), verdict));
    // a1 goes to the worker at once; a2 and a3 fill a's share of the queue.
    const accepted = [run('a', 1), run('a', 2), run('a', 3)];
    await run('a', 4).then(
      () => expect.fail("a fourth validation of a's is over its share"),
      (err: unknown) => expect(err).to.be.instanceOf(YamlValidatorBusy),
    );
    accepted.push(run('b', 1));
    for (const verdict of await Promise.all(accepted)) expect(verdict).to.deep.equal({ ok: true });
    // Served in turn: b's one validation does not wait behind everything a queued.
    expect(finished).to.deep.equal(['a1', 'a2', 'b1', 'a3']);
  });

  it('refuses content whose parse needs more than the worker heap, without harming the process', async () => {
    // A single flat document of small scalars is the densest memory use per byte.
    const validator = pool({
      workers: 1,
      memoryMb: 32,
      limits: { maxDocuments: 10, maxAnchors: 10, maxAliases: 10, maxNodes: 1e9, maxExpandedNodes: 1e9 },
    });
    const verdict = await validator.validate(`[${'1,'.repeat(1_000_000)}1]`, plain);
    expect(verdict).to.deep.include({ ok: false, limit: { limit: 'parser_memory_mb', value: 32 } });
    expect(await validator.validate('kind: Pod\n', plain)).to.deep.equal({ ok: true });
  });
});
