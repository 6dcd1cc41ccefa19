import type { RenderResult } from '@brokkr/render';
import { TemplateRendererBusy, createTemplateRenderer, type TemplateRenderer } from '@brokkr/templates';
import { errorMessage } from '../util/async.ts';

/** The largest render the agent makes of a template (the hub's own cap, its body limit, is smaller). */
const MAX_OUTPUT_CHARS = 8 * 1024 * 1024;

/** A template's inputs as the hub relays them (contracts' RenderInputs.template). */
export interface RelayedTemplate {
  content: string;
  parameters_schema: string;
  parameters?: unknown;
}

/**
 * Templates signed by their inputs (docs/signatures.md, "Templates"): rendered by the agent with
 * the engine the hub instantiates with (`@brokkr/templates`), in the same sandboxed process, one
 * process for the agent, started with the first template.
 */
export class OwnTemplateRenders {
  private renderer: TemplateRenderer | undefined;

  async render(template: RelayedTemplate | undefined): Promise<RenderResult> {
    if (!template) return { ok: false, reason: 'invalid', error: 'the hub relayed no template' };
    this.renderer ??= createTemplateRenderer({ processes: 1 });
    try {
      const result = await this.renderer.run(
        {
          kind: 'render',
          templateContent: template.content,
          parametersSchema: template.parameters_schema,
          parameters: template.parameters ?? null,
          maxOutputChars: MAX_OUTPUT_CHARS,
        },
        'agent',
      );
      if (result.ok) return { ok: true, yaml: result.output ?? '' };
      const detail = result.validationErrors?.length ? `: ${result.validationErrors.join('; ')}` : '';
      return { ok: false, reason: 'invalid', error: `${result.code}: ${result.message}${detail}` };
    } catch (err) {
      // The agent's own failure (queue full, a process that could not start): tried again next time.
      return { ok: false, reason: 'busy', error: err instanceof TemplateRendererBusy ? err.message : errorMessage(err) };
    }
  }

  async close(): Promise<void> {
    await this.renderer?.close();
  }
}
