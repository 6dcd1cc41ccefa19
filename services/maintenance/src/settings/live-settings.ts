import { diffSettings, type ConfigChange, type Settings } from './reloadable.ts';

export type SettingsListener = (settings: Settings, changes: readonly ConfigChange[]) => void;

/**
 * The settings in force. Tasks read `current` at every tick, so a reload applies from their
 * next tick on; listeners (scheduler, log level, gauges) apply it at once. Reloads are
 * serialised: a file change and a broadcast arriving together are read one after the other.
 */
export class LiveSettings {
  private settings: Settings;
  private readonly listeners: SettingsListener[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    initial: Settings,
    private readonly read: () => Promise<Settings>,
  ) {
    this.settings = initial;
  }

  get current(): Settings {
    return this.settings;
  }

  onChange(listener: SettingsListener): void {
    this.listeners.push(listener);
  }

  /** Re-reads the sources and applies what changed; rejects (keeping the settings) if they are invalid. */
  reload(): Promise<ConfigChange[]> {
    const next = this.queue.then(() => this.apply());
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async apply(): Promise<ConfigChange[]> {
    const fresh = await this.read();
    const changes = diffSettings(this.settings, fresh);
    if (changes.length === 0) return changes;
    this.settings = fresh;
    for (const listener of this.listeners) listener(fresh, changes);
    return changes;
  }
}
