// The C++ addon for real: pty pairs that pass every byte unchanged, sd_notify datagrams caught
// by a real unix socket, and the one message a missing or stale build gives.
import t from 'tap';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  ADDON_ABI,
  BUILD_COMMAND,
  addonPath,
  loadAddon,
  notify,
  notifyReady,
  notifyStatus,
  notifyStopping,
  notifyWatchdog,
  openPty,
  packageRoot,
  watchdogIntervalMs,
} from '../../../src/native/addon.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
// How a serial library opens a port: no controlling terminal, and non-blocking here so that a
// byte that never arrives fails the test instead of hanging it.
const SLAVE_FLAGS = fs.constants.O_RDWR | fs.constants.O_NOCTTY | fs.constants.O_NONBLOCK;
const O_CLOEXEC = 0o2000000;

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(tmpdir(), 'wh-native-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function readNonBlocking(fd: number, length: number): Promise<Buffer> {
  const out = Buffer.alloc(length);
  const deadline = Date.now() + 5000;
  let got = 0;
  while (got < length) {
    try {
      got += fs.readSync(fd, out, got, length - got, null);
      continue;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    }
    if (Date.now() > deadline) throw new Error(`only ${got} of ${length} bytes arrived`);
    await sleep(5);
  }
  return out;
}

// The master is blocking, as the simulator will use it; data is always written before this.
function readBlocking(fd: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let got = 0; got < length; ) got += fs.readSync(fd, out, got, length - got, null);
  return out;
}

function writeAll(fd: number, data: Buffer): void {
  for (let done = 0; done < data.length; ) done += fs.writeSync(fd, data, done);
}

t.test('openPty gives a raw pair: every byte value crosses unchanged both ways', async (t) => {
  const pty = openPty();
  t.teardown(() => fs.closeSync(pty.fd));
  t.match(pty.path, /^\/dev\/pts\/\d+$/);
  t.ok(fs.fstatSync(pty.fd).isCharacterDevice(), 'fd is a terminal device');
  const flags = /^flags:\s+([0-7]+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${pty.fd}`, 'utf8'))?.[1];
  t.ok(flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) !== 0, 'master is close-on-exec');

  const slave = fs.openSync(pty.path, SLAVE_FLAGS);
  t.teardown(() => fs.closeSync(slave));
  const forward = Buffer.concat([ALL_BYTES, Buffer.from(ALL_BYTES).reverse()]);

  writeAll(pty.fd, forward);
  t.same(await readNonBlocking(slave, forward.length), forward, 'master to slave');

  const back = Buffer.from(forward).reverse();
  writeAll(slave, back);
  // With echo on, the master would first read back what it wrote above.
  t.same(readBlocking(pty.fd, back.length), back, 'slave to master, and no echo');
});

t.test('each openPty call gives its own pair', async (t) => {
  const a = openPty();
  const b = openPty();
  t.teardown(() => {
    fs.closeSync(a.fd);
    fs.closeSync(b.fd);
  });
  t.not(a.fd, b.fd);
  t.not(a.path, b.path);
});

t.test('notify', async (t) => {
  const saved = process.env.NOTIFY_SOCKET;
  t.afterEach(() => {
    if (saved === undefined) delete process.env.NOTIFY_SOCKET;
    else process.env.NOTIFY_SOCKET = saved;
  });

  t.test('returns false when not started by systemd', async (t) => {
    delete process.env.NOTIFY_SOCKET;
    t.equal(notify('READY=1'), false);
    t.equal(notifyReady(), false);
    process.env.NOTIFY_SOCKET = '';
    t.equal(notifyWatchdog(), false, 'an empty NOTIFY_SOCKET counts as unset');
  });

  const python = spawnSync('python3', ['-c', 'import socket; socket.AF_UNIX'], { encoding: 'utf8' });
  const noPython = python.error !== undefined || python.status !== 0 ? 'python3 (the datagram receiver) is not available' : false;

  t.test('sends one datagram to a socket path', { skip: noPython }, async (t) => {
    const socket = path.join(tempDir(t), 'notify.sock');
    const { message } = await receiveOne(t, socket);
    process.env.NOTIFY_SOCKET = socket;
    t.equal(notify('STATUS=Lager bereit ✓'), true);
    t.same(await message, Buffer.from('STATUS=Lager bereit ✓'), 'bytes arrive as UTF-8');
  });

  t.test('sends to an abstract socket name (@...)', { skip: noPython }, async (t) => {
    const name = `@warehouse-test-${process.pid}-${Date.now()}`;
    const { message } = await receiveOne(t, name);
    process.env.NOTIFY_SOCKET = name;
    t.equal(notifyStopping(), true);
    t.equal((await message).toString(), 'STOPPING=1');
  });

  t.test('a status text stays one line', { skip: noPython }, async (t) => {
    const socket = path.join(tempDir(t), 'notify.sock');
    const { message } = await receiveOne(t, socket);
    process.env.NOTIFY_SOCKET = socket;
    t.equal(notifyStatus('API on port 8443\nREADY=1'), true);
    t.equal((await message).toString(), 'STATUS=API on port 8443 READY=1');
  });

  t.test('throws with the errno text when nothing listens', async (t) => {
    process.env.NOTIFY_SOCKET = path.join(tempDir(t), 'nobody.sock');
    t.throws(() => notify('READY=1'), { message: /^notify: sendto failed: .+ \(ENOENT\)$/, code: 'ENOENT', syscall: 'sendto' });
  });

  t.test('throws on an address systemd would never give', async (t) => {
    process.env.NOTIFY_SOCKET = 'relative/notify.sock';
    t.throws(() => notify('READY=1'), { message: /NOTIFY_SOCKET="relative\/notify.sock" is neither/ });
    process.env.NOTIFY_SOCKET = `/${'x'.repeat(200)}`;
    t.throws(() => notify('READY=1'), { message: /NOTIFY_SOCKET=/ }, 'too long for sockaddr_un');
  });
});

// A python3 child binds a unix datagram socket (Node cannot) and prints what it receives.
// Resolves once the socket is bound; `message` then resolves with the first datagram.
async function receiveOne(t: { teardown(fn: () => void): void }, address: string): Promise<{ message: Promise<Buffer> }> {
  const script = [
    'import base64, socket, sys',
    'address = sys.argv[1]',
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
    "s.bind('\\0' + address[1:] if address.startswith('@') else address)",
    's.settimeout(10)',
    "print('ready', flush=True)",
    'print(base64.b64encode(s.recv(65536)).decode(), flush=True)',
  ].join('\n');
  const child = spawn('python3', ['-c', script, address], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => child.kill());
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<string> => {
    const { value, done } = await lines.next();
    if (done === true) throw new Error(`receiver ended early: ${stderr}`);
    return value as string;
  };
  if ((await nextLine()) !== 'ready') throw new Error(`receiver did not start: ${stderr}`);
  return { message: nextLine().then((line) => Buffer.from(line, 'base64')) };
}

t.test('watchdogIntervalMs is half of WATCHDOG_USEC, only for this process', async (t) => {
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' }), 15000);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid) }), 15000);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid + 1) }), undefined);
  t.equal(watchdogIntervalMs({}), undefined);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '0' }), undefined);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: 'soon' }), undefined);
});

t.test('the addon is found from the package root, from src/ and from dist/', async (t) => {
  t.equal(packageRoot(), ROOT);
  t.equal(packageRoot(path.join(ROOT, 'dist', 'native')), ROOT);
  t.equal(addonPath(), path.join(ROOT, 'native', 'build', 'Release', 'warehouse_native.node'));
  t.equal(loadAddon(addonPath()).abi, ADDON_ABI, 'the built addon has the ABI this wrapper expects');
});

t.test('a missing, broken or stale build gives one message naming the file and the fix', async (t) => {
  const fix = BUILD_COMMAND.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const missing = path.join(tempDir(t), 'native', 'build', 'Release', 'warehouse_native.node');
  t.throws(() => loadAddon(missing), {
    message: new RegExp(`^native addon is not built \\(no such file\\): ${missing}; build it with \`${fix}\`$`),
    code: 'ERR_NATIVE_ADDON',
  });

  const broken = path.join(tempDir(t), 'warehouse_native.node');
  fs.writeFileSync(broken, 'not an ELF file');
  t.throws(() => loadAddon(broken), { message: new RegExp(`^native addon cannot be loaded \\(.+\\): ${broken}; build it with \`${fix}\`$`) });

  // The real build, checked against the ABI of a newer wrapper.
  t.throws(() => loadAddon(addonPath(), ADDON_ABI + 1), {
    message: new RegExp(`^native addon is stale \\(ABI ${ADDON_ABI}, this code needs ${ADDON_ABI + 1}\\): ${addonPath()}; build it with \`${fix}\`$`),
  });
});

t.test('importing never throws; the first call reports a missing build of its own package', async (t) => {
  // A copy of the wrapper in a package that has no build: import it, then call it.
  const pkg = tempDir(t);
  fs.mkdirSync(path.join(pkg, 'src', 'native'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), '{"type":"module"}');
  fs.copyFileSync(path.join(ROOT, 'src', 'native', 'addon.ts'), path.join(pkg, 'src', 'native', 'addon.ts'));
  const script = `
    const addon = await import(${JSON.stringify(path.join(pkg, 'src', 'native', 'addon.ts'))});
    console.log('imported');
    try { addon.openPty(); } catch (err) { console.log(err.message); }`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  const missing = path.join(pkg, 'native', 'build', 'Release', 'warehouse_native.node');
  t.equal(out, `imported\nnative addon is not built (no such file): ${missing}; build it with \`${BUILD_COMMAND}\`\n`);
});
