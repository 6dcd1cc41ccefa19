import { z } from 'zod';
import { uuid } from '../../http/schemas.ts';

export const templateLabelParams = z.object({ id: uuid(), label: z.string() });
export const templateAnnotationParams = z.object({ id: uuid(), key: z.string() });
