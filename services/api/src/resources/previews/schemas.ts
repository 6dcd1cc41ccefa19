import { z } from 'zod';
import { longPollWait } from '../../http/schemas.ts';

/** The wire shapes are @brokkr/contracts' (previews.ts); only query strings are the api's. */
export { pendingPreviewSchema, previewSchema, previewSummarySchema, submitPreviewResultSchema } from '@brokkr/contracts';
/** The proposed YAML comes in the forms POST /stacks/{id}/deployment-objects takes. */
export {
  newDeploymentObjectQuery as newPreviewQuery,
  newDeploymentObjectSchema as newPreviewSchema,
} from '../../http/deployment-object-schemas.ts';
export { yamlRequestContent } from '../../http/deployment-object-schemas.ts';

export const pendingPreviewsQuery = z.object({
  wait: longPollWait(
    'Long-poll: when no preview is pending, hold the request up to this many seconds ' +
      '(capped by BROKKR__BROKER__LONG_POLL_MAX_SECONDS) until one is',
  ),
});

/** How many previews GET /stacks/{id}/previews returns (newest first). */
export const STACK_PREVIEWS_LIMIT = 50;
