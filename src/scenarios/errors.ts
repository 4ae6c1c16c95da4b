import { AppError } from '../errors/index.js';

/** The scenarios capability's error codes (stable; listed in docs/api.md, Error codes). */
export const ScenarioErrorCodes = {
  /** 404: no such scenario of this assistant. */
  NOT_FOUND: 'SCENARIO_NOT_FOUND',
  /** 409 (field `name`): the assistant already has a scenario of this name. */
  NAME_TAKEN: 'SCENARIO_NAME_TAKEN',
  /** 409: the assistant has the most scenarios it may have. */
  LIMIT: 'SCENARIO_LIMIT',
  /** 400 (field `expect.N.mustSay` / `neverSay`): a /regex/ that does not compile. */
  INVALID_REGEX: 'SCENARIO_INVALID_REGEX',
  /** 400 (field `turns.N`): a turn the transport cannot make (keypad presses off the phone, interrupts in chat). */
  TURN_UNSUPPORTED: 'SCENARIO_TURN_UNSUPPORTED',
  /** 400 (field `expect.N`): an expectation the transport cannot measure, or `stopsWithinMs` without an interrupt. */
  EXPECT_UNSUPPORTED: 'SCENARIO_EXPECT_UNSUPPORTED',
  /** 400 (field `toolMocks.N`): two mocks of one tool. */
  MOCK_DUPLICATE: 'SCENARIO_MOCK_DUPLICATE',
  /** 404: no such run of this assistant. */
  RUN_NOT_FOUND: 'SCENARIO_RUN_NOT_FOUND',
  /** 400 (field `scenarios.N`): a scenario id or name the assistant does not have. */
  UNKNOWN: 'SCENARIO_UNKNOWN',
  /** 409: the assistant has no scenarios to run. */
  NONE: 'SCENARIO_NONE',
  /** 409: the assistant already has {@link MAX_ACTIVE_RUNS} runs running on this server. */
  BUSY: 'SCENARIO_RUN_BUSY',
  /** Stored on a run: the instance running it stopped before it finished. */
  RUN_INTERRUPTED: 'SCENARIO_RUN_INTERRUPTED',
} as const;

const bad = (code: string, field: string, message: string) => new AppError(code, 400, message, { details: { field } });

export const scenarioErrors = {
  notFound: () => new AppError(ScenarioErrorCodes.NOT_FOUND, 404, 'No such scenario.'),
  nameTaken: () =>
    new AppError(ScenarioErrorCodes.NAME_TAKEN, 409, 'This assistant already has a scenario of that name.', {
      details: { field: 'name' },
    }),
  limit: (max: number) =>
    new AppError(ScenarioErrorCodes.LIMIT, 409, `An assistant can have at most ${max} scenarios.`, {
      details: { maxScenarios: max },
    }),
  invalidRegex: (field: string) =>
    bad(ScenarioErrorCodes.INVALID_REGEX, field, 'This regular expression does not compile.'),
  turnUnsupported: (field: string, message: string) => bad(ScenarioErrorCodes.TURN_UNSUPPORTED, field, message),
  expectUnsupported: (field: string, message: string) => bad(ScenarioErrorCodes.EXPECT_UNSUPPORTED, field, message),
  mockDuplicate: (field: string) =>
    bad(ScenarioErrorCodes.MOCK_DUPLICATE, field, 'A tool can be mocked once per scenario.'),
  runNotFound: () => new AppError(ScenarioErrorCodes.RUN_NOT_FOUND, 404, 'No such scenario run.'),
  unknown: (field: string) =>
    bad(ScenarioErrorCodes.UNKNOWN, field, 'This assistant has no scenario of that id or name.'),
  none: () => new AppError(ScenarioErrorCodes.NONE, 409, 'This assistant has no scenarios to run.'),
  busy: (max: number) =>
    new AppError(
      ScenarioErrorCodes.BUSY,
      409,
      `This assistant already has ${max} scenario runs running; wait for one to end.`,
      {
        details: { maxActiveRuns: max },
      },
    ),
};
