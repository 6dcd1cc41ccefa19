import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import {
  ACTOR_TYPES,
  AUDIT_RESOURCE_TYPES,
  EVENT_TYPES,
  agentNoticeSchema,
  auditRecordSchema,
  configReloadNoticeSchema,
  deliveriesDueNoticeSchema,
  eventEnvelopeSchema,
  fleetNoticeSchema,
  pakInvalidationSchema,
  telemetryFrameSchema,
  webhookInvalidationSchema,
} from '../src/index.ts';

const doc = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/nats-subjects.md'), 'utf8');

function section(heading: RegExp): string {
  const start = doc.search(heading);
  expect(start, `section ${heading}`).to.be.greaterThan(-1);
  const rest = doc.slice(start + 1);
  const end = rest.search(/^## /m);
  return end === -1 ? rest : rest.slice(0, end);
}

function jsonBlocks(text: string): unknown[] {
  return [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] ?? '') as unknown);
}

/** The inline JSON payloads of a table row (`{...}` in backticks), parsed. */
function inlinePayloads(row: string): unknown[] {
  return [...row.matchAll(/`(\{[^`]*\})`/g)].map((m) => JSON.parse(m[1] ?? '') as unknown);
}

function expectValid(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  expect(parsed.success, `${what}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues)}`).to.equal(true);
}

/** docs/nats-subjects.md promises these shapes to integrators; the schemas are what the services use. */
describe('docs/nats-subjects.md agrees with @brokkr/contracts', () => {
  it('the event example is an envelope, and the event table lists exactly EVENT_TYPES', () => {
    const events = section(/^## 2\. Events/m);
    for (const block of jsonBlocks(events)) expectValid(eventEnvelopeSchema, block, 'event example');
    const listed = [...events.matchAll(/^\| `brokkr\.events\.([a-z._]+)` \|/gm)].map((m) => m[1]);
    expect(listed).to.deep.equal([...EVENT_TYPES]);
  });

  it("the audit example is an audit record, and the actor and resource types are the schema's", () => {
    const audit = section(/^## 3\. Audit entries/m);
    const examples = jsonBlocks(audit);
    expect(examples).to.have.length.greaterThan(0);
    for (const block of examples) expectValid(auditRecordSchema, block, 'audit example');
    const actors = /`actor_type` is ([^;]+);/.exec(audit)?.[1] ?? '';
    expect([...actors.matchAll(/`([a-z_]+)`/g)].map((m) => m[1])).to.deep.equal([...ACTOR_TYPES]);
    const resources = /`resource_type` one of `([^`]+)`/.exec(audit)?.[1] ?? '';
    expect(resources.split(',').map((s) => s.trim())).to.deep.equal([...AUDIT_RESOURCE_TYPES]);
  });

  it("every core-subject payload in the table parses with that subject's schema", () => {
    const core = section(/^## 4\. Core subjects/m);
    const schemas: [RegExp, z.ZodType][] = [
      [/^\| `brokkr\.notify\.agent\.<agent_id>`.*$/m, agentNoticeSchema],
      [/^\| `brokkr\.notify\.deliveries`.*$/m, deliveriesDueNoticeSchema],
      [/^\| `brokkr\.cache\.invalidate\.pak`.*$/m, pakInvalidationSchema],
      [/^\| `brokkr\.cache\.invalidate\.webhooks`.*$/m, webhookInvalidationSchema],
      [/^\| `brokkr\.live\.stack\.<stack_id>`.*$/m, telemetryFrameSchema],
      [/^\| `brokkr\.live\.fleet`.*$/m, fleetNoticeSchema],
    ];
    for (const [row, schema] of schemas) {
      const line = row.exec(core)?.[0] ?? '';
      const payloads = inlinePayloads(
        line
          .replaceAll('"<uuid>"', '"6f1c1f4e-3c4e-4d7a-9b8e-2a9f0f6f2b11"')
          .replaceAll('"<subscription uuid>"', '"6f1c1f4e-3c4e-4d7a-9b8e-2a9f0f6f2b11"'),
      );
      expect(payloads, line).to.have.length.greaterThan(0);
      for (const payload of payloads) expectValid(schema, payload, line.slice(0, 40));
    }
    for (const block of jsonBlocks(core)) expectValid(configReloadNoticeSchema, block, 'config reload example');
  });
});
