import type { DeploymentObjectRow } from '../../domain/deployment-object-row.ts';
import type { Carried } from './signatures.ts';

/** Distinct answers whose bytes are kept; a fleet holds far fewer at once. */
const MAX_ANSWERS = 1000;

/**
 * The JSON of target-state answers, made once per distinct answer rather than once per agent: a
 * change to a stack 10,000 long-polling agents hold gives most of them the same answer, and
 * serialising it 10,000 times (the manifests are kilobytes) was most of a change's cost in the api.
 * Each row is serialised once (the rows are shared between answers: shared-rows.ts), each answer
 * once per distinct list of rows; the patch frames of the agent channel take their rows' JSON from
 * here too. Beyond the bound the oldest answer is forgotten and made again when asked for.
 */
export class AnswerBytes {
  private readonly rows = new WeakMap<DeploymentObjectRow, string>();
  /** A row's JSON with the signature carried with it, made once per row and signature. */
  private readonly signedRows = new WeakMap<DeploymentObjectRow, { carried: Carried; json: string }>();
  private readonly answers = new Map<string, Buffer>();

  constructor(private readonly max: number = MAX_ANSWERS) {}

  rowJson(row: DeploymentObjectRow): string {
    let json = this.rows.get(row);
    if (json === undefined) this.rows.set(row, (json = JSON.stringify(row)));
    return json;
  }

  /**
   * The row's JSON with `"signature"` (the stored bundle's JSON as it is) before its closing brace,
   * for an agent that asked for signatures; the plain row's JSON when it has none.
   */
  servedRowJson(row: DeploymentObjectRow, carried: Carried | undefined): string {
    if (!carried) return this.rowJson(row);
    const known = this.signedRows.get(row);
    if (known?.carried === carried) return known.json;
    const json = `${this.rowJson(row).slice(0, -1)},"signature":${carried.json}}`;
    this.signedRows.set(row, { carried, json });
    return json;
  }

  /**
   * The answer's body, exactly what JSON.stringify(rows) would give; with `carried` (an agent that
   * asked for signatures), each row's signature in it (servedRowJson).
   */
  answer(rows: readonly DeploymentObjectRow[], carried?: readonly (Carried | undefined)[]): Buffer {
    const signed = carried ? `signed:${carried.map((c) => c?.sha ?? '-').join(',')}:` : '';
    const key = signed + rows.map((row) => `${row.id}:${row.yaml_checksum}:${row.deleted_at?.getTime() ?? ''}`).join(',');
    let bytes = this.answers.get(key);
    if (bytes) return bytes;
    const json = carried ? rows.map((row, i) => this.servedRowJson(row, carried[i])) : rows.map((row) => this.rowJson(row));
    bytes = Buffer.from(`[${json.join(',')}]`);
    if (this.answers.size >= this.max) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(key, bytes);
    return bytes;
  }
}
