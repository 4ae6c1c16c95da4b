import t from 'tap';
import { ConfigError, loadConfig } from '../../../src/config/index.js';
import { TEST_SECRET_KEY } from '../../helpers/app.js';

/** The recordings settings are checked at boot: every problem named, never a silent default. */
const base = { SECRET_KEY: TEST_SECRET_KEY, NODE_ENV: 'test' };

t.test('RECORDINGS_STORE=s3 needs S3_BUCKET; the link lifetime has bounds', async (t) => {
  t.throws(() => loadConfig({ ...base, RECORDINGS_STORE: 's3' }), { name: 'ConfigError', message: /S3_BUCKET/ });
  t.throws(() => loadConfig({ ...base, RECORDINGS_STORE: 'nfs' }), ConfigError);
  t.throws(() => loadConfig({ ...base, RECORDING_URL_TTL_SECONDS: '10' }), { message: /RECORDING_URL_TTL_SECONDS/ });
  t.throws(() => loadConfig({ ...base, S3_FORCE_PATH_STYLE: 'maybe' }), { message: /S3_FORCE_PATH_STYLE/ });
  const config = loadConfig({ ...base, RECORDINGS_STORE: 's3', S3_BUCKET: 'calls', S3_ENDPOINT: 'http://minio:9000' });
  t.match(config, { RECORDINGS_STORE: 's3', S3_BUCKET: 'calls', S3_PREFIX: 'recordings/', S3_FORCE_PATH_STYLE: false });
  t.match(loadConfig(base), { RECORDINGS_STORE: 'disk', RECORDING_URL_TTL_SECONDS: 86_400 });
});
