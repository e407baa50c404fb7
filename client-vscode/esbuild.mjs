// Bundles the extension and vscode-languageclient into one file, dist/extension.js (with a source map), so
// the .vsix carries no node_modules. `vscode` is provided by the editor at run time.
import * as esbuild from 'esbuild';

const watch = process.argv.includes('--watch');
const options = {
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  minify: !watch,
  logLevel: 'info',
};
if (watch) {
  await (await esbuild.context(options)).watch();
} else {
  await esbuild.build(options);
}
