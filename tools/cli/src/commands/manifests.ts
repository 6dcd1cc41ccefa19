import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { CliError } from '../errors.ts';

/** Optional per-directory settings for `apply` (`.brokkr.yaml`, never part of the manifests). */
export interface StackSettings {
  stack?: string;
  description?: string;
  /** Owner of a new stack (admin PAK only): generator name or id. */
  generator?: string;
  /** Agents (names or ids) the stack is targeted at. */
  targets?: string[];
  /** Stack labels (agents with one of them receive the stack). */
  labels?: string[];
}

export interface Manifests {
  /** The stack name derived from the path: the directory's name, or a file's name without extension. */
  defaultStackName: string;
  files: string[];
  /** Every file's documents, in file-name order, as one multi-document YAML. */
  content: string;
  /** What the hub stores as yaml_checksum: hex SHA-256 of the content's UTF-8 bytes. */
  checksum: string;
  settings: StackSettings;
}

export const SETTINGS_FILE = '.brokkr.yaml';
const isManifest = (name: string) => /\.ya?ml$/i.test(name) && !name.startsWith('.');

export const checksumOf = (content: string): string => createHash('sha256').update(content, 'utf8').digest('hex');

/** Reads `-f`: a directory (its *.yaml / *.yml files, not recursive, sorted by name) or one file. */
export function readManifests(target: string): Manifests {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(target);
  } catch {
    throw new CliError(`${target}: no such file or directory`);
  }
  const dir = stat.isDirectory() ? target : path.dirname(target);
  const files = stat.isDirectory()
    ? fs
        .readdirSync(target)
        .filter(isManifest)
        .sort()
        .map((f) => path.join(target, f))
    : [target];
  if (files.length === 0) throw new CliError(`${target}: no *.yaml or *.yml files in this directory`);
  const content = files.map((f) => section(f, dir)).join('---\n');
  const settings = stat.isDirectory() ? readSettings(path.join(target, SETTINGS_FILE)) : {};
  const base = path.basename(path.resolve(target));
  const defaultStackName = stat.isDirectory() ? base : base.replace(/\.ya?ml$/i, '');
  return { defaultStackName, files, content, checksum: checksumOf(content), settings };
}

/** One file's text, checked: valid YAML, each document a mapping (a Kubernetes object) or empty. */
function section(file: string, dir: string): string {
  const text = fs.readFileSync(file, 'utf8');
  const docs = parseAllDocuments(text);
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    const error = doc.errors[0];
    if (error) throw new CliError(`${file}: invalid YAML: ${error.message.split('\n')[0]}`);
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined && (typeof value !== 'object' || Array.isArray(value)))
      throw new CliError(`${file}: every YAML document must be a Kubernetes object (a mapping)`);
  }
  if (!docs.some((d) => d.contents !== null)) throw new CliError(`${file}: no YAML documents`);
  const body = text.replace(/^(\s*---[^\n]*\n)+/, '').trimEnd();
  return `# source: ${path.relative(dir, file) || path.basename(file)}\n${body}\n`;
}

/** The directory's `.brokkr.yaml`, if it has one. */
export function readSettingsIn(dir: string): StackSettings {
  return readSettings(path.join(dir, SETTINGS_FILE));
}

function readSettings(file: string): StackSettings {
  if (!fs.existsSync(file)) return {};
  let doc: unknown;
  try {
    doc = parse(fs.readFileSync(file, 'utf8')) ?? {};
  } catch (err) {
    throw new CliError(`${file}: invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new CliError(`${file}: expected a mapping`);
  const problem = settingsProblem(doc as Record<string, unknown>);
  if (problem) throw new CliError(`${file}: ${problem}`);
  return doc as StackSettings;
}

const STRING_KEYS = ['stack', 'description', 'generator'];
const LIST_KEYS = ['targets', 'labels'];
const isStringList = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string');

function settingsProblem(settings: Record<string, unknown>): string | undefined {
  const known = [...STRING_KEYS, ...LIST_KEYS];
  const unknown = Object.keys(settings).filter((k) => !known.includes(k));
  if (unknown.length) return `unknown key(s) ${unknown.join(', ')} (known: ${known.join(', ')})`;
  const badString = STRING_KEYS.find((k) => settings[k] !== undefined && typeof settings[k] !== 'string');
  if (badString) return `${badString} must be a string`;
  const badList = LIST_KEYS.find((k) => settings[k] !== undefined && !isStringList(settings[k]));
  if (badList) return `${badList} must be a list of strings`;
  return undefined;
}
