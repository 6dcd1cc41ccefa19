/** The agent's version, in its User-Agent headers and on its health server. */
export const AGENT_VERSION = '0.1.0';
