import type { Logger } from '@brokkr/logger';
import {
  advanceMetadata,
  checkIntent,
  checkWorkOrder,
  keylessTrustMaterial,
  namedInputMismatch,
  refusalMessage,
  renderInputsMismatch,
  sha256Hex,
  staleness,
  type LocalIdentity,
  type MetadataState,
  type Refusal,
  type StackRecord,
  type TrustMaterial,
  type TrustPolicy,
  type TrustView,
} from '@brokkr/trust';
import type { DeploymentObject, ServedDeploymentObject, WorkOrder } from '@brokkr/contracts';
import type { EventReporter } from '../reconcile/event-reporter.ts';
import { errorMessage, Wakeup } from '../util/async.ts';
import { metadataVersions, startingMetadata } from './metadata-state.ts';
import { sameRender } from './same-render.ts';
import type { TrustMetrics } from './metrics.ts';
import type { OwnRenders, RelayedRender } from './own-render.ts';
import type { TrustRelay } from './relay.ts';
import type { PersistedTrust, TrustStateStore } from './state-store.ts';

export interface TrustGateDeps {
  policy: TrustPolicy;
  relay: TrustRelay;
  store: TrustStateStore;
  events: EventReporter;
  metrics: TrustMetrics;
  logger: Logger;
  identity: LocalIdentity;
  /**
   * The trust metadata is asked for this often, and at once when the hub says it changed
   * (metadataChanged: the agent channel's `trust_metadata_changed`); never because the target state did.
   */
  refreshMs: number;
  /** Charts and overlays signed by their inputs, rendered by the agent itself (docs/signatures.md, "Charts and overlays"). */
  own?: OwnRenders;
}

/** Admitted (with the record it leaves, when signed), refused, or admitted but waiting until its record is written to the cluster. */
type Screened =
  | { object: DeploymentObject; record?: StackRecord }
  | { object: DeploymentObject; refusal: Refusal }
  | { object: DeploymentObject; waiting: true };

/**
 * Stands between the hub's target state and the reconciler when the agent has a trust policy
 * (docs/signatures.md). Every object is checked against the policy before the reconciler sees it
 * (@brokkr/trust checkIntent); a refused one never reaches it: the stack keeps the last version
 * the agent admitted (or, after a restart, nothing is touched), and the refusal is an event whose
 * message starts with its reason. What must survive a restart (versions taken, metadata taken) is
 * written to the agent's cluster before the reconciler may act on it. Work orders are checked the
 * same way before they run.
 */
export class TrustGate {
  private metadata: MetadataState;
  private readonly keyless: TrustMaterial | undefined;
  /**
   * Signatures the hub relayed, by deployment object id: carried with the object (the target state
   * and its patches, asked for with signatures), else fetched (GET /agents/{id}/signatures), and
   * fetched again when one no longer passes (re-signed since, say).
   */
  private readonly signatures = new Map<string, unknown>();
  /** The object of each stack admitted last: what the reconciler keeps applying while a newer one is refused. */
  private readonly admitted = new Map<string, DeploymentObject>();
  /** Stacks whose object was refused with no earlier admitted one still valid: the reconciler leaves them as they are. */
  private readonly held = new Set<string>();
  /** The refusal last logged per object: a refusal repeated on every re-screen is logged once. */
  private readonly refusals = new Map<string, string>();
  /** Objects whose served content differed from the agent's own render (counted once each). */
  private readonly differences = new Set<string>();
  private received: DeploymentObject[] | undefined;
  /** Whether the metadata was asked for once: until then a screen or a work order waits for it. */
  private metadataAsked = false;
  private stale: string | undefined;
  private retryScreen = false;
  /** The last screen refused something: each refresh asks the hub again (a signature stored since, e.g. re-signed by a new key). */
  private refusing = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly refreshWake = new Wakeup();
  private queued = false;
  /** Where the admitted objects go: the reconcile loop, once it exists (attach). */
  private sink: ((objects: DeploymentObject[]) => void) | undefined;

  private constructor(
    private readonly deps: TrustGateDeps,
    private persisted: PersistedTrust,
  ) {
    this.metadata = startingMetadata(deps.policy.root, persisted);
    this.keyless = deps.policy.sigstoreTrustedRoot ? keylessTrustMaterial(deps.policy.sigstoreTrustedRoot) : undefined;
    this.stale = staleness(this.metadata, deps.policy.maxMetadataAgeMs, new Date());
    deps.metrics.stale.set(this.stale ? 1 : 0);
    deps.metrics.rootVersion.set(this.metadata.root.version);
  }

  static async create(deps: TrustGateDeps): Promise<TrustGate> {
    return new TrustGate(deps, await deps.store.load());
  }

  /**
   * Whether a stack the hub no longer lists (or whose object was refused) keeps its objects.
   * Requiring signatures, always: a stack's objects are deleted only by a signed deletion marker, or
   * pruned by a newer signed version. Otherwise a stack held by a refusal keeps them too.
   */
  keepsVanished(stackId: string): boolean {
    return this.deps.policy.requireSignatures || this.held.has(stackId);
  }

  attach(sink: (objects: DeploymentObject[]) => void): void {
    this.sink = sink;
  }

  /**
   * A new target state from the hub: checked, then the admitted part offered. One screen at a time,
   * the newest state last. A signature carried with an object is the hub's newest for it.
   */
  offer(objects: ServedDeploymentObject[]): void {
    for (const o of objects) if (o.signature !== undefined) this.signatures.set(o.id, o.signature);
    this.received = objects;
    this.enqueue();
  }

  /** The hub's trust metadata changed: refresh now rather than at the end of the interval. */
  metadataChanged(): void {
    this.refreshWake.notify();
  }

  /**
   * Every refresh interval, or at once when the hub says the metadata changed: new metadata (a
   * rotation, a revocation, a timestamp, or staleness) screens the held state again.
   */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.refreshWake.wait(this.deps.refreshMs, signal);
      if (signal.aborted) break;
      await this.serial(async () => {
        const changed = await this.refreshMetadata();
        if (changed || this.retryScreen || this.refusing) await this.screenLatest();
      }).catch((err: unknown) => this.deps.logger.warn({ err: errorMessage(err) }, 'refreshing the trust metadata failed'));
    }
    await this.chain;
    await this.deps.own?.close().catch(() => undefined);
    await this.deps.relay.close().catch(() => undefined);
  }

  /**
   * Runs `fn` after everything queued before it: screens, refreshes and work-order checks read and
   * write the same state (and the same ConfigMap), so they never overlap.
   */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.chain.then(fn);
    this.chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** One screen of the newest state queued at a time: states that arrive meanwhile are screened together, as the newest. */
  private enqueue(): void {
    if (this.queued) return;
    this.queued = true;
    void this.serial(() => {
      this.queued = false;
      return this.screenLatest();
    }).catch((err: unknown) =>
      this.deps.logger.warn({ err: errorMessage(err) }, 'checking the target state against the trust policy failed'),
    );
  }

  private async screenLatest(): Promise<void> {
    const objects = this.received;
    if (!objects) return;
    await this.metadataNow();
    const admitted = await this.screen(objects);
    this.sink?.(admitted);
  }

  private view(): TrustView {
    const { root, revocations } = this.metadata;
    return { root, revocations, stale: this.stale, keyless: this.keyless, identity: this.deps.identity, now: new Date() };
  }

  /**
   * The metadata to check against now: read on its own signal (run), never per change or work
   * order, so only the first use waits for it; after that what is held, judged fresh or stale now.
   */
  private async metadataNow(): Promise<void> {
    if (!this.metadataAsked) await this.refreshMetadata();
    else this.noteStaleness(staleness(this.metadata, this.deps.policy.maxMetadataAgeMs, new Date()));
  }

  /** The metadata the hub relays, taken where it verifies; true when what objects are checked against changed. */
  private async refreshMetadata(): Promise<boolean> {
    this.metadataAsked = true;
    const before = `${metadataVersions(this.metadata)}:${this.stale ?? ''}`;
    try {
      const { state, problems } = advanceMetadata(this.metadata, await this.deps.relay.metadata());
      for (const problem of problems) this.deps.logger.warn({ problem }, 'trust metadata relayed by the hub was not taken');
      if (metadataVersions(state) !== metadataVersions(this.metadata)) await this.keepMetadata(state);
    } catch (err) {
      this.deps.logger.warn({ err: errorMessage(err) }, 'could not refresh the trust metadata');
    }
    this.noteStaleness(staleness(this.metadata, this.deps.policy.maxMetadataAgeMs, new Date()));
    return `${metadataVersions(this.metadata)}:${this.stale ?? ''}` !== before;
  }

  /** Newer metadata is written to the cluster first, then used. */
  private async keepMetadata(state: MetadataState): Promise<void> {
    const next = {
      ...this.persisted,
      root: state.rootEnvelope,
      revocations: state.revocationsEnvelope,
      timestamp: state.timestampEnvelope,
    };
    await this.deps.store.save(next);
    this.persisted = next;
    if (state.root.version !== this.metadata.root.version) this.deps.logger.info({ root: state.root.version }, 'trust root rotated');
    this.metadata = state;
    this.deps.metrics.rootVersion.set(state.root.version);
  }

  private noteStaleness(stale: string | undefined): void {
    if (stale !== this.stale) {
      if (stale)
        this.deps.logger.warn({ reason: stale }, 'trust_metadata_stale: no new version is taken until the hub relays fresh metadata');
      else if (this.stale) this.deps.logger.info('trust metadata fresh again');
    }
    this.stale = stale;
    this.deps.metrics.stale.set(stale ? 1 : 0);
  }

  /** The objects the reconciler may act on: each admitted one, or in place of a refused one the stack's last admitted object. */
  private async screen(objects: DeploymentObject[]): Promise<DeploymentObject[]> {
    await this.fetchSignatures(objects.filter((o) => !this.signatures.has(o.id)).map((o) => o.id));
    let screened = objects.map((o) => this.check(o));
    const recheck = screened.filter((s) => 'refusal' in s && this.signatures.has(s.object.id)).map((s) => s.object.id);
    if (recheck.length) {
      // A refusal on a signature fetched earlier: the hub may have a newer one (re-signed after a revocation).
      for (const id of recheck) this.signatures.delete(id);
      await this.fetchSignatures(recheck);
      screened = objects.map((o) => this.check(o));
    }
    screened = await this.withOwnRenders(objects, screened);
    const kept = await this.keepRecords(screened);
    this.refusing = kept.some((s) => 'refusal' in s);
    const offered = kept.flatMap((s) => this.outcome(s));
    // Refused inputs are asked for again at the next screen: the hub may serve the signed ones by then.
    for (const s of kept) if ('refusal' in s) this.deps.own?.forget(s.object.id);
    this.retain(objects);
    return offered;
  }

  /**
   * Objects refused as served may be charts or overlays signed by their inputs: asked about once
   * (plain YAML stays plain), checked by the document of the inputs relayed, and each one admitted
   * replaced by the agent's own render of them. What the hub served is never applied then.
   */
  private async withOwnRenders(objects: DeploymentObject[], screened: Screened[]): Promise<Screened[]> {
    const own = this.deps.own;
    if (!own) return screened;
    const unknown = screened.filter((s) => 'refusal' in s && !s.object.is_deletion_marker && !own.known(s.object.id));
    if (unknown.length) {
      await own.fetch(unknown.map((s) => s.object.id));
      screened = objects.map((o) => this.check(o));
    }
    return Promise.all(screened.map((s) => this.ownRender(s)));
  }

  private async ownRender(s: Screened): Promise<Screened> {
    const relayed = this.deps.own?.get(s.object.id);
    if (!relayed || 'refusal' in s || 'waiting' in s) return s;
    // A renderer that cannot run refuses this object only: the rest of the state is still offered.
    const result = await this.deps.own!.render(relayed).catch((err: unknown) => ({ ok: false as const, error: errorMessage(err) }));
    if (!result.ok) return { object: s.object, refusal: { reason: 'render_failed', detail: `${relayed.renderer}: ${result.error}` } };
    if (!sameRender(result.yaml, s.object.yaml_content)) return this.servedDiffers(s.object, relayed, result.yaml);
    return { ...s, object: { ...s.object, yaml_content: result.yaml, yaml_checksum: sha256Hex(result.yaml) } };
  }

  /**
   * The hub served other content than the signed inputs render to: it lied, rendered other inputs,
   * or selected other override layers than this agent's own identity does (the labels it stores
   * are not the trust policy's). Refused like any content that is not the signed one: the stack
   * keeps what was admitted before.
   */
  private servedDiffers(object: DeploymentObject, relayed: RelayedRender, own: string): Screened {
    if (!this.differences.has(object.id)) {
      this.differences.add(object.id);
      this.deps.metrics.renderDifferences.inc();
    }
    const detail =
      `the hub served a ${relayed.kind} render (sha256 ${object.yaml_checksum.slice(0, 12)}…) that is not the agent’s own ` +
      `render of the signed inputs (sha256 ${sha256Hex(own).slice(0, 12)}…)`;
    return { object, refusal: { reason: 'signature_invalid', detail } };
  }

  /** A chart or an overlay: its signature must name the inputs relayed (hashed here) and this agent's renderer. */
  private checkRendered(object: DeploymentObject, relayed: RelayedRender): Screened {
    if (relayed.notSignable) return { object, refusal: { reason: 'render_not_signable', detail: relayed.notSignable } };
    const verdict = checkIntent(
      this.view(),
      { stackId: object.stack_id, content: relayed.document, deletion: false, signed: relayed.signature, rendered: relayed.kind },
      this.persisted.stacks[object.stack_id],
    );
    if (!verdict.ok) return { object, refusal: this.namedRefusal(verdict.refusal, relayed) };
    const mismatch = renderInputsMismatch(verdict.statement.predicate, relayed.digests, relayed.renderer);
    if (mismatch) return { object, refusal: { reason: 'signature_invalid', detail: mismatch } };
    return { object, record: verdict.record };
  }

  /** A rendered object's content refusal says which input the hub changed, when the statement names another. */
  private namedRefusal(refusal: Refusal, relayed: RelayedRender): Refusal {
    // Only a subject mismatch: a refusal for the signer or the signature itself keeps its own detail.
    if (refusal.reason !== 'signature_invalid' || !refusal.detail.startsWith('its content ')) return refusal;
    const named = namedInputMismatch(relayed.signature, relayed.digests, relayed.renderer);
    return named ? { reason: 'signature_invalid', detail: named } : refusal;
  }

  private async fetchSignatures(ids: string[]): Promise<void> {
    if (!ids.length) return;
    const found = await this.deps.relay.objectSignatures(ids);
    for (const [id, signature] of found) this.signatures.set(id, signature);
  }

  private check(object: DeploymentObject): Screened {
    const relayed = this.deps.own?.get(object.id);
    if (relayed) return this.checkRendered(object, relayed);
    const signed = this.signatures.get(object.id);
    if (signed === undefined && !this.deps.policy.requireSignatures) return { object };
    const end = this.deps.metrics.verifySeconds.startTimer();
    const verdict = checkIntent(
      this.view(),
      { stackId: object.stack_id, content: object.yaml_content, deletion: object.is_deletion_marker, signed },
      this.persisted.stacks[object.stack_id],
    );
    end();
    return verdict.ok ? { object, record: verdict.record } : { object, refusal: verdict.refusal };
  }

  /** Versions taken are written to the cluster before anything is applied; if that fails, the new ones wait. */
  private async keepRecords(screened: Screened[]): Promise<Screened[]> {
    const changed = screened.filter((s) => 'record' in s && s.record && !sameRecord(s.record, this.persisted.stacks[s.object.stack_id]));
    if (!changed.length) return screened;
    const stacks = { ...this.persisted.stacks };
    for (const s of changed) if ('record' in s && s.record) stacks[s.object.stack_id] = s.record;
    try {
      await this.deps.store.save({ ...this.persisted, stacks });
      this.persisted = { ...this.persisted, stacks };
      this.retryScreen = false;
      return screened;
    } catch (err) {
      this.retryScreen = true;
      this.deps.logger.warn({ err: errorMessage(err) }, 'could not record the versions taken in the cluster: new versions wait');
      return screened.map((s) => (changed.includes(s) ? { object: s.object, waiting: true } : s));
    }
  }

  private outcome(s: Screened): DeploymentObject[] {
    const stack = s.object.stack_id;
    if (!('refusal' in s) && !('waiting' in s)) {
      this.admitted.set(stack, s.object);
      this.held.delete(stack);
      this.refusals.delete(s.object.id);
      return [s.object];
    }
    if ('refusal' in s) this.refused(s.object, s.refusal);
    // The bytes admitted before (even when the hub now serves other bytes under the same id), while
    // they still pass: after a revocation of their key they are not applied again either.
    const previous = this.admitted.get(stack);
    if (previous && !('refusal' in this.check(previous))) return [previous];
    this.admitted.delete(stack);
    this.held.add(stack);
    return [];
  }

  /** Forgets what belongs to objects neither served nor admitted any more, so the maps stay bounded. */
  private retain(objects: DeploymentObject[]): void {
    const ids = new Set(objects.map((o) => o.id));
    for (const o of this.admitted.values()) ids.add(o.id);
    for (const id of this.signatures.keys()) if (!ids.has(id)) this.signatures.delete(id);
    for (const id of this.refusals.keys()) if (!ids.has(id)) this.refusals.delete(id);
    for (const id of this.differences) if (!ids.has(id)) this.differences.delete(id);
    this.deps.own?.retain(ids);
  }

  private refused(object: DeploymentObject, refusal: Refusal): void {
    const message = refusalMessage(refusal);
    if (this.refusals.get(object.id) === message) return;
    this.refusals.set(object.id, message);
    this.deps.metrics.refusals.inc({ reason: refusal.reason });
    this.deps.logger.warn(
      { stack: object.stack_id, deploymentObject: object.id, reason: refusal.reason, detail: refusal.detail },
      'refused by the trust policy',
    );
    this.deps.events.report(object.id, object.is_deletion_marker ? 'DELETED' : 'APPLIED', 'FAILURE', `refused: ${message}`);
  }

  /** Why a work order must not run, or undefined: signed, for this agent, not expired, and not run before (by its nonce). */
  workOrderRefusal(order: WorkOrder): Promise<Refusal | undefined> {
    return this.serial(() => this.checkOrder(order));
  }

  private async checkOrder(order: WorkOrder): Promise<Refusal | undefined> {
    await this.metadataNow();
    const signed = await this.deps.relay.workOrderSignature(order.id);
    if (signed === undefined && !this.deps.policy.requireSignatures) return undefined;
    const verdict = checkWorkOrder(this.view(), { workType: order.work_type, content: order.yaml_content, signed });
    if (!verdict.ok) return this.refusedOrder(verdict.refusal);
    const { nonce, expires } = verdict.statement.predicate;
    if (this.persisted.workOrders[nonce])
      return this.refusedOrder({ reason: 'rollback_rejected', detail: `signed work order ${nonce} was run already` });
    const now = Date.now();
    const workOrders = Object.fromEntries(Object.entries(this.persisted.workOrders).filter(([, until]) => Date.parse(until) > now));
    workOrders[nonce] = expires;
    await this.deps.store.save({ ...this.persisted, workOrders });
    this.persisted = { ...this.persisted, workOrders };
    return undefined;
  }

  private refusedOrder(refusal: Refusal): Refusal {
    this.deps.metrics.refusals.inc({ reason: refusal.reason });
    return refusal;
  }
}

function sameRecord(a: StackRecord, b: StackRecord | undefined): boolean {
  return !!b && a.version === b.version && a.digest === b.digest && a.highest === b.highest && a.highestDigest === b.highestDigest;
}
