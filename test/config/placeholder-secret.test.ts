import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { scratchDir } from '../helpers/scratch.js';

// deploy/env.example is what people copy; production must not start with its SECRET_KEY left in.
const example = readFileSync(new URL('../../deploy/env.example', import.meta.url), 'utf8');
const placeholder = /^SECRET_KEY=(.*)$/m.exec(example)?.[1]?.trim();

t.test('production refuses the example SECRET_KEY; other modes and real keys start', async (t) => {
  t.ok(placeholder !== undefined && placeholder.length >= 32, 'the example ships a SECRET_KEY line');
  const base = { DATA_DIR: scratchDir('parley-config-') };
  const err = (() => {
    try {
      loadConfig({ ...base, NODE_ENV: 'production', SECRET_KEY: placeholder! });
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  t.type(err, ConfigError, 'refused in production');
  t.match((err as ConfigError).problems.join('\n'), /SECRET_KEY: is the example's placeholder/);
  t.notMatch((err as ConfigError).message, placeholder!, 'the value itself is not echoed');
  t.equal(
    loadConfig({ ...base, NODE_ENV: 'development', SECRET_KEY: placeholder! }).secretKeySource,
    'env',
    'development may use it',
  );
  const real = 'kP9v2Qe7Lr4Tz8Xw1Nb6Hs3Jd5Fg0Ym2Ca7Ue4Io9Pq1Rt';
  t.equal(
    loadConfig({ ...base, NODE_ENV: 'production', SECRET_KEY: real }).secretKey,
    real,
    'a real key starts in production',
  );
});
