// A TCP port free on 127.0.0.1 now, for a port a layout must name before anything listens on
// it (a tcp://host:port level): the kernel picks one, and it is let go at once.
import net from 'node:net';

/** A port nothing listens on at this moment. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
