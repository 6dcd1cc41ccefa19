import type { AnyRoute } from '../http/route.ts';
import { authRoutes } from './auth.ts';

/**
 * Every /api/v1 route of the service. A route module exports an `AnyRoute[]`; add it here
 * (one import, one spread). Order only matters between paths express could confuse.
 */
export const allRoutes: readonly AnyRoute[] = [...authRoutes];
