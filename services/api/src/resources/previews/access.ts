import type { Queryable } from '@brokkr/db';
import type { Identity } from '../../auth/identity.ts';
import { errorKind, raising } from '../../errors/api-error.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import type { PreviewRow } from './sql/preview-row.ts';
import { findPreview, isPreviewAgent } from './sql/queries.ts';

export const previewNotFound = errorKind(404, 'preview_not_found', 'Preview not found');
export const previewNotTargeted = errorKind(403, 'preview_not_targeted', 'The preview does not target this agent');
export const previewAlreadyReported = errorKind(
  409,
  'preview_already_reported',
  'This agent already reported on the preview, or it expired',
);
export const invalidPreview = errorKind(400, 'invalid_preview', 'Invalid preview');
export const invalidPreviewResult = errorKind(400, 'invalid_preview_result', 'Invalid preview result');

/**
 * Reading a preview: it must exist (404 `preview_not_found`), then the caller must own its stack
 * (an admin or the stack's generator, like the deployment objects it proposes).
 */
export const fetchReadablePreview = raising(
  async (db: Queryable, identity: Identity, id: string): Promise<PreviewRow> => {
    const preview = await findPreview(db, id);
    if (!preview) throw previewNotFound();
    await fetchOwnedStack(db, identity, preview.stack_id);
    return preview;
  },
  previewNotFound,
  fetchOwnedStack,
);

/** Reporting: only an agent the preview targeted, for itself (admins and generators are refused too). */
export const requireTargetedAgent = raising(
  async (db: Queryable, identity: Identity, previewId: string): Promise<string> => {
    const agentId = identity.agent;
    if (!agentId) throw previewNotTargeted.with('Only a targeted agent may report a preview result');
    if (!(await findPreview(db, previewId))) throw previewNotFound();
    if (!(await isPreviewAgent(db, previewId, agentId))) throw previewNotTargeted();
    return agentId;
  },
  previewNotFound,
  previewNotTargeted,
);
