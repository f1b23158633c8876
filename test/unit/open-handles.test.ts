import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeOpenHandles, trackOpenHandles } from '../support/open-handles';

/** The check every test file passes when it ends (test/support/checked-environment.ts), called directly. */
describe('handles a test file leaves open', () => {
  it('names a listening server left open, with its address and where it was made, and nothing once it is closed', async () => {
    const tracker = trackOpenHandles();
    const server = http.createServer();
    try {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;

      const left = await tracker.check(50);
      expect(left).toEqual([{ type: 'TCPSERVERWRAP', detail: `(127.0.0.1:${port})`, createdAt: expect.any(String) }]);
      expect(describeOpenHandles(left)).toContain(`1 handle(s) this test file opened were still open when it ended`);
      expect(describeOpenHandles(left)).toContain(`TCPSERVERWRAP (127.0.0.1:${port})`);

      await new Promise<void>((resolve) => server.close(() => resolve()));
      expect(await tracker.check()).toEqual([]);
    } finally {
      server.close();
      tracker.stop();
    }
  });

  it('names a pending timer with the line that set it; an unref()ed one or a cleared one is not held against the file', async () => {
    const tracker = trackOpenHandles();
    const pending = setTimeout(() => undefined, 60_000);
    const unrefed = setTimeout(() => undefined, 60_000).unref();
    try {
      const left = await tracker.check(50);
      expect(left).toEqual([{ type: 'Timeout', detail: expect.stringContaining('60000 ms'), createdAt: expect.stringContaining('open-handles.test.ts') }]);

      clearTimeout(pending);
      expect(await tracker.check()).toEqual([]);
    } finally {
      clearTimeout(pending);
      clearTimeout(unrefed);
      tracker.stop();
    }
  });
});
