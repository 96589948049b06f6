// A level's serial_device as the layout schema takes it: tcp://host:port beside "sim" and
// /dev/..., and the same strings as the TCP transport parses (so a layout that loads never
// names a device the daemon cannot open, and the other way round).
import t from 'tap';
import { buildSite, SiteError } from '../../../src/domain/site/load.js';
import { parseTcpDevice } from '../../../src/link/tcp.js';
import { simSite } from '../../fixtures/sim-site.js';

function problemsWith(device: string): string[] {
  const layout = simSite('TCP device site');
  layout.levels[0]!.serial_device = device;
  try {
    buildSite(layout);
    return [];
  } catch (err) {
    if (err instanceof SiteError) return err.problems;
    throw err;
  }
}

const accepted = ['sim', '/dev/serial/by-id/usb-FTDI_x-if00-port0', 'tcp://10.0.0.20:4001', 'tcp://gw-2.site.lan:1', 'tcp://[fd00::20]:65535', 'tcp://[::1]:4001'];
const refused = ['COM3', 'tcp://10.0.0.20', 'tcp://10.0.0.20:0', 'tcp://10.0.0.20:65536', 'tcp://10.0.0.20:99999', 'tcp://:4001', 'tcp://a b:4001', 'udp://10.0.0.20:4001', 'tcp://10.0.0.20:4001/x'];

for (const device of accepted) {
  t.test(`accepted: ${device}`, async (t) => {
    t.same(problemsWith(device), []);
    if (device.startsWith('tcp://')) t.ok(parseTcpDevice(device), 'and the TCP transport opens it');
  });
}

for (const device of refused) {
  t.test(`refused: ${device}`, async (t) => {
    t.match(problemsWith(device).join('\n'), /levels\[0\]\.serial_device:/);
    t.equal(parseTcpDevice(device), undefined, 'and the TCP transport does not take it either');
  });
}
