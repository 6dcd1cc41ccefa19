import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@brokkr/bus';
import type { Logger } from '@brokkr/logger';
import { Delivery } from '../../src/delivery/pipeline.ts';
import { createPublishWindow } from '../../src/delivery/publish-window.ts';
import { Replicas } from '../../src/delivery/replicas.ts';
import { createNotifyAgents, type NotifyAgents } from '../../src/delivery/send.ts';
import { Waiters } from '../../src/delivery/waiters.ts';

/** The api's notice sender on `nc`, with a delivery whose stages hold nothing (a write path tested without HTTP). */
export function testNotifyAgents(nc: NatsConnection, logger: Logger): NotifyAgents {
  const nothing = { noticed: () => undefined };
  const delivery = new Delivery(randomUUID(), { answers: nothing, waiters: new Waiters(), sockets: nothing, views: [] });
  return createNotifyAgents({ nc, delivery, replicas: new Replicas(delivery.origin), logger, window: createPublishWindow() });
}
