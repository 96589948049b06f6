// Another process that takes a store's LMDB write lock and holds it, as a long commit or a
// slow disk's fsync would hold it from the store's point of view.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** Another process takes LMDB's write lock and holds it `ms`, as a long commit or a slow fsync would; resolves once it holds it. */
export async function holdLock(dir: string, flag: string, ms: number): Promise<ChildProcess> {
  const holder = spawn(process.execPath, ['--input-type=module', '-e', `
    import { open } from 'lmdb';
    import { writeFileSync, unlinkSync } from 'node:fs';
    const root = open({ path: ${JSON.stringify(path.join(dir, 'warehouse.mdb'))}, maxDbs: 128 });
    root.transactionSync(() => {
      root.putSync('held by another process', 1);
      writeFileSync(${JSON.stringify(flag)}, '');
      process.stdout.write('holding');
      const until = Date.now() + ${ms};
      while (Date.now() < until);
      unlinkSync(${JSON.stringify(flag)});
    });
    await root.close();
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => holder.stdout!.on('data', (d: Buffer) => d.toString().includes('holding') && resolve()));
  return holder;
}
