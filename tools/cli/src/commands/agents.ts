import type { Command } from 'commander';
import { formatFor, hubFor, print, sayFor } from '../context.ts';
import { render, renderFields } from '../output.ts';
import { findAgent, findGenerator } from '../resolve.ts';
import type { Agent, CreateAgentResponse, RotateAgentPakResponse } from '../types.ts';

interface CreateOptions {
  cluster: string;
  generator: string[];
  activate?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The PAK block: printed once, never stored by the hub (only its hash). */
const pakNotice = (agent: Agent, pak: string) =>
  renderFields([
    ['Agent', `${agent.name} (cluster ${agent.cluster_name})`],
    ['ID', agent.id],
    ['Status', agent.status],
    ['PAK', pak],
  ]) + 'The PAK is shown only now: the hub keeps only its hash. Give it to the agent as BROKKR__AGENT__PAK.\n';

export function registerAgents(program: Command): void {
  const agents = program.command('agents').description('Create agents and rotate their PAKs (admin PAK)');

  agents
    .command('create')
    .description('Register an agent for a cluster; prints its PAK once')
    .argument('<name>', 'agent name')
    .requiredOption('--cluster <name>', 'cluster name (name + cluster are unique)')
    .option('--generator <name|id>', 'also register the agent with this generator; repeatable', collect, [])
    .option('--activate', 'set the agent ACTIVE right away (new agents are INACTIVE and receive nothing)')
    .action(async (name: string, options: CreateOptions, cmd: Command) => {
      const format = formatFor(cmd);
      const hub = hubFor(cmd);
      const generatorIds = await Promise.all(options.generator.map(async (ref) => (await findGenerator(hub, ref)).id));
      const created = await hub.post<CreateAgentResponse>('/agents', {
        name,
        cluster_name: options.cluster,
        ...(generatorIds.length ? { generator_ids: generatorIds } : {}),
      });
      if (options.activate) {
        created.agent = await hub.put<Agent>(`/agents/${created.agent.id}`, { status: 'ACTIVE' });
        sayFor(format)(`agent ${created.agent.name} activated`);
      }
      print(render(created, format, () => pakNotice(created.agent, created.initial_pak)));
    });

  agents
    .command('rotate-pak')
    .description("Replace an agent's PAK; the old one stops working at once")
    .argument('<name-or-id>', 'the agent')
    .action(async (ref: string, _options: unknown, cmd: Command) => {
      const format = formatFor(cmd);
      const hub = hubFor(cmd);
      const agent = await findAgent(hub, ref);
      const rotated = await hub.post<RotateAgentPakResponse>(`/agents/${agent.id}/rotate-pak`);
      print(render(rotated, format, () => pakNotice(rotated.agent, rotated.pak)));
    });
}
