import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Identity } from '../auth/identity.ts';
import { hashPresentedPak, pakFromAuthorization } from '@brokkr/pak';
import { errorKind } from '../errors/api-error.ts';

// Brokkr answers the middleware's 401s with an empty body; we send JSON.
export const unauthorized = errorKind(401, 'unauthorized', 'Invalid PAK');

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

export function identityOf(res: Response): Identity {
  const identity = res.locals.identity as Identity | undefined;
  if (!identity) throw new Error('route reached without authentication');
  return identity;
}

/** Records a presented credential that matched nobody (the request tells who sent it). */
export type OnFailedAuth = (req: IncomingMessage, path: string) => void;

/** Who presents the request's PAK; 401 (and a recorded failure) when nobody does. */
export async function resolveIdentity(auth: Authenticator, onFailure: OnFailedAuth, req: IncomingMessage, path: string): Promise<Identity> {
  const header = req.headers.authorization;
  if (header === undefined) throw unauthorized.with('Missing Authorization header');
  const hash = PRINTABLE_ASCII.test(header) ? hashPresentedPak(pakFromAuthorization(header)) : undefined;
  const identity = hash === undefined ? undefined : await auth.resolveRequest(hash, req);
  if (!identity) {
    onFailure(req, path);
    throw unauthorized();
  }
  return identity;
}

/** Resolves `Authorization` to an identity (`res.locals.identity`) or answers 401. */
export function authenticate(auth: Authenticator, onFailure: OnFailedAuth): RequestHandler {
  return async (req: Request, res: Response, next) => {
    res.locals.identity = await resolveIdentity(auth, onFailure, req, req.path);
    next();
  };
}
