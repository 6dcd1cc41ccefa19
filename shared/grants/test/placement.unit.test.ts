import { expect } from 'chai';
import type { Grant } from '@brokkr/contracts';
import {
  defaultNamespaceFor,
  defaultNamespaceOf,
  namespaceMatches,
  placementRefusal,
  resolveGrant,
  wholeClusterInEffect,
  type Placement,
  type PlacementScope,
} from '../src/index.ts';

const GEN = '3f2a9c01-b7e4-4c1d-9a5e-0123456789ab';

function scope(grant: Partial<Grant> = {}, extra: Partial<PlacementScope> = {}): PlacementScope {
  return {
    generatorId: GEN,
    generatorName: 'team-a',
    grant: { ...resolveGrant(null, GEN), whole_cluster: false, namespaces: ['team-a', 'team-a-*'], ...grant },
    wholeCluster: false,
    agentNamespace: 'brokkr-agent',
    others: [],
    ...extra,
  };
}

const obj = (kind: string, namespace: string | undefined, more: Partial<Placement> = {}): Placement => ({
  apiVersion: 'v1',
  kind,
  name: 'x',
  namespace,
  namespaced: namespace !== undefined,
  ...more,
});

describe('grants: the placement rule', () => {
  it('derives a valid default namespace from the generator id, stable across renames', () => {
    expect(defaultNamespaceOf(GEN)).to.equal('brokkr-3f2a9c01b7e4');
    expect(resolveGrant(null, GEN)).to.include({ whole_cluster: true, cluster_scoped: false, adoption: false, delete_adopted: false });
  });

  it('matches namespace patterns with * as the only wildcard', () => {
    expect(namespaceMatches('team-a-*', 'team-a-dev')).to.equal(true);
    expect(namespaceMatches('team-a-*', 'team-b-dev')).to.equal(false);
    expect(namespaceMatches('team.a', 'teamxa')).to.equal(false);
    expect(namespaceMatches('*', 'anything')).to.equal(true);
  });

  it('reaches the whole cluster only while the generator is the only tenant (the system generator always)', () => {
    const grant = resolveGrant(null, GEN);
    expect(wholeClusterInEffect(grant, false, 1)).to.equal(true);
    expect(wholeClusterInEffect(grant, false, 2)).to.equal(false);
    expect(wholeClusterInEffect({ ...grant, whole_cluster: false }, false, 1)).to.equal(false);
    expect(wholeClusterInEffect({ ...grant, whole_cluster: false }, true, 5)).to.equal(true);
  });

  it("refuses the agent's own namespace to everyone, also with the whole cluster", () => {
    const whole = scope({}, { wholeCluster: true });
    expect(placementRefusal(whole, obj('Pod', 'brokkr-agent'))).to.match(/agent's own namespace brokkr-agent/);
    expect(placementRefusal(whole, obj('Namespace', undefined, { name: 'brokkr-agent', namespaced: false }))).to.match(/own namespace/);
    expect(placementRefusal(whole, obj('Pod', 'kube-system'))).to.equal(undefined);
  });

  it('confines namespaced objects to the granted namespaces and the default one', () => {
    const s = scope();
    expect(placementRefusal(s, obj('Pod', 'team-a'))).to.equal(undefined);
    expect(placementRefusal(s, obj('Pod', 'team-a-dev'))).to.equal(undefined);
    expect(placementRefusal(s, obj('Pod', defaultNamespaceOf(GEN)))).to.equal(undefined);
    expect(placementRefusal(s, obj('Pod', 'team-b'))).to.match(/namespace outside what generator "team-a" is granted/);
    expect(defaultNamespaceFor(s)).to.equal(defaultNamespaceOf(GEN));
    expect(defaultNamespaceFor(scope({}, { wholeCluster: true }))).to.equal(undefined);
  });

  it('refuses cluster-scoped kinds unless granted, Namespaces outside the grant, and refused kinds always', () => {
    const s = scope();
    const clusterRole = obj('ClusterRole', undefined, { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: false });
    const pv = obj('PersistentVolume', undefined, { namespaced: false });
    expect(placementRefusal(s, pv)).to.match(/cluster-scoped/);
    expect(placementRefusal(scope({ cluster_scoped: true }), pv)).to.equal(undefined);
    expect(placementRefusal(scope({ cluster_scoped: true }), clusterRole)).to.match(/refused to generator "team-a"/);
    expect(placementRefusal(s, obj('Namespace', undefined, { name: 'team-a-dev', namespaced: false }))).to.equal(undefined);
    expect(placementRefusal(s, obj('Namespace', undefined, { name: 'team-b', namespaced: false }))).to.match(/namespace outside/);
  });

  it('puts quota, limit ranges and network policies only in namespaces no other tenant is granted', () => {
    const other = { generatorName: 'team-b', grant: { ...resolveGrant(null, GEN), namespaces: ['shared'] } };
    const s = scope({ namespaces: ['team-a', 'shared'] }, { others: [other] });
    expect(placementRefusal(s, obj('ResourceQuota', 'shared'))).to.match(/generator "team-b" is granted too/);
    const netpol = obj('NetworkPolicy', 'shared', { apiVersion: 'networking.k8s.io/v1' });
    expect(placementRefusal(s, netpol)).to.match(/NetworkPolicy/);
    expect(placementRefusal(s, obj('ResourceQuota', 'team-a'))).to.equal(undefined);
    expect(placementRefusal(s, obj('ConfigMap', 'shared'))).to.equal(undefined);
  });

  it('leaves an object of unknown scope without a namespace to the agent (the hub cannot tell)', () => {
    expect(placementRefusal(scope(), obj('Widget', undefined, { apiVersion: 'demo.io/v1', namespaced: undefined }))).to.equal(undefined);
  });
});
