/** The api service's public surface (tests and tooling); the process entry point is main.ts. */
export { createApp, type ApiApp, type AppOptions } from './http/app.ts';
export { createContext, type ContextDeps } from './create-context.ts';
export type { ApiContext } from './context.ts';
export { startApi, type RunningApi } from './start.ts';
export type { Identity } from './auth/identity.ts';
export { ApiError } from './http/api-error.ts';
