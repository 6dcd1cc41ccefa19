import { z } from 'zod';
import { overrideNameSchema } from '@brokkr/contracts';
import { uuid } from '../../http/schemas.ts';

/** The wire shapes are @brokkr/contracts' (overrides.ts): the CLI and the console read the same. */
export { newOverrideSchema, overrideSchema, overrideUpdateSchema, type NewOverride } from '@brokkr/contracts';

export const overrideParams = z.object({ id: uuid(), name: overrideNameSchema });
