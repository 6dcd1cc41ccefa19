import { z } from 'zod';
import { uuid } from '../../http/schemas.ts';

export const pakSummarySchema = z.object({ id: uuid(), name: z.string() }).meta({ id: 'PakSummary' });
