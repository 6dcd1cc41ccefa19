import { expect } from 'chai';
import { claimFor, ownedAfterApply } from '../src/reconcile/ownership.ts';
import type { KubeObject } from '../src/manifest/parse.ts';

const STACK = 'k8s.brokkr.io/stack';
const OWNER = 'brokkr.io/owner-id';
const doc = (annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', namespace: 'default', ...(annotations ? { annotations } : {}) },
});
const adopting = doc({ 'brokkr.io/adopt-existing': 'true' });
const live = (labels?: Record<string, string>, managers: string[] = []) => ({
  name: 'x',
  uid: 'u',
  ...(labels ? { labels } : {}),
  managedFields: managers.map((manager) => ({ manager })),
});

/** The one rule of which live objects a stack may apply over (reconcile/ownership.ts); end to end in reconcile.e2e.test.ts. */
describe('agent ownership claim rule', () => {
  it('creates what does not exist and applies over what carries its own stack label', () => {
    expect(claimFor('s1', doc(), undefined, true)).to.deep.equal({ verdict: 'create' });
    expect(claimFor('s1', doc(), live({ [STACK]: 's1' }), true)).to.deep.equal({ verdict: 'ours' });
  });

  it("refuses another stack's object, even when the manifest asks to adopt it", () => {
    for (const d of [doc(), adopting]) {
      const claim = claimFor('s1', d, live({ [STACK]: 's2', [OWNER]: 'agent' }), true);
      expect(claim).to.deep.equal({
        verdict: 'refused',
        reason: `belongs to stack s2 (label ${STACK}): a stack never applies over another stack's object`,
      });
    }
  });

  it('refuses an object no stack manages, naming who wrote it, unless the manifest adopts it', () => {
    const found = live({ team: 'ops' }, ['kubectl-create', 'kubectl-edit', 'kubectl-create']);
    const refused = claimFor('s1', doc(), found, true);
    expect(refused).to.have.property('verdict', 'refused');
    expect(refused)
      .to.have.property('reason')
      .that.matches(/^already exists and no stack manages it \(written by kubectl-create, kubectl-edit\)/);
    expect(claimFor('s1', doc({ 'brokkr.io/adopt-existing': 'yes' }), found, true)).to.have.property('verdict', 'refused');
    expect(claimFor('s1', adopting, found, true)).to.deep.equal({ verdict: 'adopt' });
  });

  it('never adopts when the agent turns adoption off (BROKKR__AGENT__ADOPTION_ENABLED=false)', () => {
    const claim = claimFor('s1', adopting, live(), false);
    expect(claim).to.have.property('verdict', 'refused');
    expect(claim).to.have.property('reason').that.includes('adoption is off for this stack here');
  });

  it('stamps the owner label on new, own and adopted objects only', () => {
    expect(ownedAfterApply(undefined, 'a1', { verdict: 'create' })).to.equal(true);
    expect(ownedAfterApply(live({ [STACK]: 's1', [OWNER]: 'a1' }), 'a1', { verdict: 'ours' })).to.equal(true);
    expect(ownedAfterApply(live({ [STACK]: 's1', [OWNER]: 'a2' }), 'a1', { verdict: 'ours' }), "another agent's").to.equal(false);
    expect(ownedAfterApply(live(), 'a1', { verdict: 'adopt' })).to.equal(true);
  });
});
