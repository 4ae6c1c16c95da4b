import { customAlphabet } from 'nanoid';
import { getOwnedAssistant } from '../assistants/index.js';
import type { OwnerPrincipal } from '../auth/index.js';
import type { Sql } from '../db/index.js';
import { scenarioErrors } from './errors.js';
import { regexOf } from './match.js';
import * as q from './queries.js';
import { MAX_SCENARIOS, type ScenarioInput, type ScenarioPatch } from './schemas.js';

export interface ScenarioServiceDeps {
  sql: Sql;
}

const idBody = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 20);
export const newScenarioId = () => `scn_${idBody()}`;
export const newRunId = () => `srun_${idBody()}`;

/** Expectations about audio: measured only on voice transports. */
const AUDIO_EXPECTATIONS = ['maxFirstAudioMs', 'stopsWithinMs'] as const;

/**
 * What the schema alone cannot check, each refusal naming its field: regexes compile, turns and expectations fit the
 * transport (keypad presses only on the phone, no interrupts or audio figures in chat, `stopsWithinMs` needs an
 * interrupt to stop after, `endReason` is a call's), one mock per tool.
 */
export function checkScenario(s: q.ScenarioFields): void {
  s.turns.forEach((turn, i) => {
    if ('press' in turn && s.transport !== 'phone')
      throw scenarioErrors.turnUnsupported(`turns.${i}`, 'Keypad presses need the phone transport.');
    if ('interrupt' in turn && s.transport === 'chat')
      throw scenarioErrors.turnUnsupported(`turns.${i}`, 'Interrupts need a voice transport (websocket or phone).');
    if ('interrupt' in turn && i === 0)
      throw scenarioErrors.turnUnsupported(`turns.${i}`, 'An interrupt talks over an answer: it cannot come first.');
  });
  const hasInterrupt = s.turns.some((turn) => 'interrupt' in turn);
  s.expect.forEach((e, i) => {
    for (const key of ['mustSay', 'neverSay'] as const) {
      if (key in e && regexOf((e as Record<string, string>)[key]!) === null)
        throw scenarioErrors.invalidRegex(`expect.${i}.${key}`);
    }
    const audio = AUDIO_EXPECTATIONS.find((k) => k in e);
    if (audio !== undefined && s.transport === 'chat')
      throw scenarioErrors.expectUnsupported(`expect.${i}`, `${audio} is measured on voice transports only.`);
    if ('endReason' in e && s.transport === 'chat')
      throw scenarioErrors.expectUnsupported(`expect.${i}`, 'endReason is measured on voice transports only.');
    if ('stopsWithinMs' in e && !hasInterrupt)
      throw scenarioErrors.expectUnsupported(`expect.${i}`, 'stopsWithinMs needs an interrupt turn.');
  });
  const seen = new Set<string>();
  s.toolMocks.forEach((m, i) => {
    if (seen.has(m.tool)) throw scenarioErrors.mockDuplicate(`toolMocks.${i}`);
    seen.add(m.tool);
  });
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

export function presentScenario(row: q.ScenarioRow) {
  return {
    id: row.id,
    assistantId: row.assistantId,
    name: row.name,
    transport: row.transport,
    turns: row.turns,
    expect: row.expect,
    toolMocks: row.toolMocks,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export async function createScenario(
  deps: ScenarioServiceDeps,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
  input: ScenarioInput,
) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  const fields: q.ScenarioFields = { ...input, toolMocks: input.toolMocks ?? [] };
  checkScenario(fields);
  try {
    const row = await deps.sql.begin(async (tx) => {
      await q.lockAssistant(tx, assistant.id);
      if ((await q.countScenarios(tx, assistant.id)) >= MAX_SCENARIOS) throw scenarioErrors.limit(MAX_SCENARIOS);
      if (await q.findByName(tx, assistant.id, fields.name)) throw scenarioErrors.nameTaken();
      return q.insertScenario(tx, newScenarioId(), assistant.id, fields);
    });
    return presentScenario(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw scenarioErrors.nameTaken();
    throw err;
  }
}

export async function listScenarios(
  deps: ScenarioServiceDeps,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  return (await q.listScenarios(deps.sql, assistant.id)).map(presentScenario);
}

export async function getScenario(
  deps: ScenarioServiceDeps,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
  scenarioId: string,
) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  const row = await q.findScenario(deps.sql, assistant.id, scenarioId);
  if (!row) throw scenarioErrors.notFound();
  return presentScenario(row);
}

export async function updateScenario(
  deps: ScenarioServiceDeps,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
  scenarioId: string,
  patch: ScenarioPatch,
) {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  try {
    const row = await deps.sql.begin(async (tx) => {
      const current = await q.findScenario(tx, assistant.id, scenarioId);
      if (!current) throw scenarioErrors.notFound();
      const fields: q.ScenarioFields = {
        name: patch.name ?? current.name,
        transport: patch.transport ?? current.transport,
        turns: patch.turns ?? current.turns,
        expect: patch.expect ?? current.expect,
        toolMocks: patch.toolMocks ?? current.toolMocks,
      };
      checkScenario(fields);
      return q.updateScenario(tx, current.id, fields);
    });
    if (!row) throw scenarioErrors.notFound();
    return presentScenario(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw scenarioErrors.nameTaken();
    throw err;
  }
}

export async function deleteScenario(
  deps: ScenarioServiceDeps,
  owner: Pick<OwnerPrincipal, 'accountId'>,
  assistantId: string,
  scenarioId: string,
): Promise<void> {
  const assistant = await getOwnedAssistant(deps.sql, owner, assistantId);
  if (!(await q.deleteScenario(deps.sql, assistant.id, scenarioId))) throw scenarioErrors.notFound();
}
