import { Missing } from './values.ts';

/**
 * The variables a render sees: the template's own scope (what `set` defines at the top), one
 * more per loop, and under them the parameters. Names are kept in Maps, so no name a template
 * spells can reach an object's prototype.
 */
export class Scope {
  private readonly variables = new Map<string, unknown>();

  private constructor(
    private readonly parent: Scope | undefined,
    private readonly parameters: Readonly<Record<string, unknown>>,
  ) {}

  static forParameters(parameters: Readonly<Record<string, unknown>>): Scope {
    return new Scope(undefined, parameters);
  }

  /** A loop's scope: its names hide outer ones until the loop ends. */
  child(): Scope {
    return new Scope(this, this.parameters);
  }

  lookup(name: string): unknown {
    const holder = this.holderOf(name);
    if (holder) return holder.variables.get(name);
    return Object.hasOwn(this.parameters, name) ? this.parameters[name] : new Missing(name);
  }

  /** The innermost scope that defines `name`. */
  private holderOf(name: string): Scope | undefined {
    if (this.variables.has(name)) return this;
    return this.parent?.holderOf(name);
  }

  /** Binds a name in this scope (a loop's variables). */
  bind(name: string, value: unknown): void {
    this.variables.set(name, value);
  }

  /**
   * `set`: changes the variable where it was defined (so `set` in a loop updates a variable set
   * before it, as `set_global` asks), or defines it here.
   */
  assign(name: string, value: unknown): void {
    (this.holderOf(name) ?? this).variables.set(name, value);
  }
}
