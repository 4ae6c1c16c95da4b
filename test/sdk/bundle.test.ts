import t from 'tap';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

/**
 * The SDK's browser entry points bundle for the browser with nothing from Node: esbuild refuses `node:` built-ins
 * on platform "browser", so a stray import fails here. (The CLI under sdk/src/cli is Node-only by design.)
 */
for (const entry of ['index.ts', 'voice/index.ts']) {
  t.test(`sdk/src/${entry} bundles for browsers without Node built-ins`, async (t) => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL(`../../sdk/src/${entry}`, import.meta.url))],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      minify: true,
      logLevel: 'silent',
      metafile: true,
    });
    t.same(result.errors, []);
    const inputs = Object.keys(result.metafile.inputs);
    t.ok(
      inputs.every((file) => file.startsWith('sdk/src/') || file.includes('sdk/src/')),
      `only SDK sources are bundled: ${inputs.join(', ')}`,
    );
    const bytes = result.outputFiles[0]!.contents.length;
    t.ok(bytes > 0);
    t.comment(`${entry}: ${bytes} bytes minified`);
  });
}
