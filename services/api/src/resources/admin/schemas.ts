import { z } from 'zod';
import { timestamp } from '../../http/schemas.ts';

/** The rotation's answer, as clients read it, is @brokkr/contracts' (paks.ts). */
export { rotateAdminPakResponseSchema } from '@brokkr/contracts';

const changeSchema = z.object({ key: z.string(), old_value: z.string(), new_value: z.string() }).meta({ id: 'ConfigChangeInfo' });
export const configReloadResponseSchema = z
  .object({ reloaded_at: timestamp(), changes: changeSchema.array(), success: z.boolean(), message: z.string() })
  .meta({ id: 'ConfigReloadResponse' });

export const rotateAdminPakBodySchema = z
  .object({ current_pak: z.string().min(1).max(512).describe('The admin PAK in use (the one in the Authorization header)') })
  .meta({ id: 'RotateAdminPakRequest' });
