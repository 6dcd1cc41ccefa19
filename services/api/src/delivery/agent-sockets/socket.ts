import type { WebSocket } from 'ws';

/** Which lane a frame goes out on: control before telemetry. */
export type Lane = 'control' | 'telemetry';

/**
 * One agent's socket as the delivery sends to it (agent-channel/connection.ts is the socket with
 * its lanes and uplinks).
 */
export interface AgentSocket {
  readonly agentId: string;
  readonly ws: WebSocket;
  readonly connectedSince: Date;
  /** The agent asked for `target_state_patch` frames (our agent does; Brokkr's does not). */
  readonly takesPatches: boolean;
  /**
   * The agent checks signatures (`target-state-signatures`, our agent with a trust policy): its
   * patch frames carry each object's signature, and it hears `trust_metadata_changed`.
   */
  readonly takesSignatures: boolean;
  readonly messagesIn: number;
  readonly messagesOut: number;
  /** Queues a frame; `coalesce` drops it when the same type is already waiting. False when the lane is full. */
  send(lane: Lane, type: string, body: unknown, options?: { coalesce?: boolean }): boolean;
  /** As send(), with the frame's text already built (parts shared by many agents). */
  sendEncoded(lane: Lane, type: string, text: string | (() => string), options?: { coalesce?: boolean }): boolean;
}

export interface ConnectionSnapshot {
  agent_id: string;
  connected_since: Date;
  messages_in: number;
  messages_out: number;
}
