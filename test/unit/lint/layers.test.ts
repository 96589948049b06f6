// The lint holds the layers (http -> domain -> store; brain -> domain, native): a planted
// import across a layer fails it, an import along the layers passes. The real tree is linted
// by `npm test` itself; here each zone is shown to bite, so a config change that silently
// disables one fails.
import t from 'tap';
import path from 'node:path';
import { ESLint } from 'eslint';

const ROOT = path.join(import.meta.dirname, '../../..');

// Planted sources are not in the TypeScript project, so they are linted without type
// information: the layer rule needs none.
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: [{
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' },
  }],
});

async function restricted(file: string, specifier: string): Promise<boolean> {
  const [result] = await eslint.lintText(`import { thing } from '${specifier}';\nexport const used = thing;\n`, { filePath: path.join(ROOT, file) });
  return result!.messages.some((m) => m.ruleId === 'no-restricted-imports');
}

t.test('each layer may import below it and not above it', async (t) => {
  // [importing file, import, refused]
  const cases: [string, string, boolean][] = [
    ['src/domain/requests/planted.ts', '../../http/errors.js', true],
    ['src/domain/requests/planted.ts', '../../brain/worker/brain.js', true],
    ['src/domain/requests/planted.ts', '../../link/protocol/messages.js', true],
    ['src/domain/requests/planted.ts', '../../native/planner.js', true],
    ['src/domain/requests/planted.ts', '../../store/store.js', false],
    ['src/domain/requests/planted.ts', '../inventory/records.js', false],
    ['src/store/planted.ts', '../domain/errors.js', true],
    ['src/store/planted.ts', '../http/route.js', true],
    ['src/store/planted.ts', './collection.js', false],
    ['src/http/routes/planted.ts', '../../store/store.js', true],
    ['src/http/routes/planted.ts', '../../link/serial.js', true],
    ['src/http/routes/planted.ts', '../../brain/messages.js', true],
    ['src/http/routes/planted.ts', '../../domain/errors.js', false],
    ['src/http/planted.ts', '../store/collection.js', true],
    ['src/brain/worker/policy/planted.ts', '../../../store/store.js', true],
    ['src/brain/worker/policy/planted.ts', '../../../http/route.js', true],
    ['src/brain/worker/policy/planted.ts', '../../../domain/requests/records.js', false],
    ['src/brain/worker/policy/planted.ts', '../../../native/planner.js', false],
    // Even where the brain's thread is put together: the domain opens its view of the store.
    ['src/brain/worker/main.ts', '../../store/store.js', true],
    ['src/brain/host/host.ts', '../../store/commit-bridge.js', true],
  ];
  for (const [file, specifier, refused] of cases) {
    t.equal(await restricted(file, specifier), refused, `${file} importing ${specifier}: ${refused ? 'refused' : 'allowed'}`);
  }
});
