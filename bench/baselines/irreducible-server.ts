import http from 'node:http';
import os from 'node:os';
import { createPrivateKey } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { PayloadDecryptor } from '../../src/crypto/payload-decryptor';
import { DecryptPool } from '../../src/crypto/decrypt-pool';

/**
 * The irreducible work of the hot paths, served by a bare `node:http` server (a child process of
 * the bench), for the service to be measured against in the same run:
 *
 * - POST /create2048: the body's `data` decrypted on the event loop (RSA_NO_PADDING and the
 *   constant-time unpadding with implicit rejection: PayloadDecryptor, the same as the
 *   service's), JSON.parse, one INSERT with `pg`, a small JSON answer;
 * - POST /create4096: the same with a 4096-bit key, decrypted in worker threads on every core
 *   (DecryptPool with one thread per core, nothing inline);
 * - POST /verify: one SELECT of the order by (environment, reference), its row as JSON;
 * - POST /status: decrypt (2048, inline) and the same SELECT.
 *
 * No authentication, no validation, no fees, no customer, no timeline: what is left when
 * everything the service adds is taken away.
 */
interface Setup {
  databaseUrl: string;
  poolSize: number;
  privateKey2048: string;
  privateKey4096: string;
  environmentId: number;
}

async function start(setup: Setup): Promise<number> {
  const pool = new Pool({ connectionString: setup.databaseUrl, max: setup.poolSize });
  await pool.query(`create table if not exists bench_irreducible_order (
    id serial primary key, environment_id int not null, reference varchar(100) not null, email varchar(320) not null,
    amount numeric(20,4) not null, currency char(3) not null, narration text not null, redirect_url text not null,
    created_at timestamptz not null default now(), unique (environment_id, reference))`);
  const d2048 = new PayloadDecryptor(createPrivateKey(setup.privateKey2048));
  const d4096 = new PayloadDecryptor(createPrivateKey(setup.privateKey4096));
  const workers = new DecryptPool({ threads: os.availableParallelism(), inlineMaxMs: 0, niceIncrement: 0 });

  const insert = async (p: any) => {
    const r = await pool.query({
      name: 'irreducible_insert',
      text: 'insert into bench_irreducible_order (environment_id, reference, email, amount, currency, narration, redirect_url) values ($1,$2,$3,$4,$5,$6,$7) returning id',
      values: [setup.environmentId, p.order.reference, p.customer.email, p.order.amount, p.order.currency, p.order.description, p.payment.RedirectUrl],
    });
    return { status: 'success', data: { id: r.rows[0].id, reference: p.order.reference } };
  };
  const select = async (reference: string) => {
    const r = await pool.query({
      name: 'irreducible_select',
      text: 'select * from checkout_order where environment_id = $1 and reference = $2',
      values: [setup.environmentId, reference],
    });
    return { status: 'success', data: r.rows[0] ?? null };
  };

  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      const answer = async () => {
        const body = JSON.parse(text) as { data?: string; reference?: string };
        switch (req.url) {
          case '/create2048':
            return insert(d2048.decrypt(body.data!));
          case '/create4096':
            return insert(await workers.decrypt(d4096, body.data!));
          case '/verify':
            return select(body.reference!);
          case '/status':
            return select(String(d2048.decrypt(body.data!).reference));
          default:
            throw new Error('unknown path');
        }
      };
      answer().then(
        (out) => {
          const json = JSON.stringify(out);
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) }).end(json);
        },
        (err) => {
          const json = JSON.stringify({ status: 'failed', message: String(err) });
          res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) }).end(json);
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

if (process.send) {
  process.on('message', (msg: { cmd: string; setup?: Setup }) => {
    if (msg.cmd === 'start') {
      start(msg.setup!).then(
        (port) => process.send!({ port }),
        (err) => {
          process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
          process.exit(1);
        },
      );
    } else if (msg.cmd === 'stats') {
      const cpu = process.cpuUsage();
      process.send!({ cpuUs: cpu.user + cpu.system, rss: process.memoryUsage().rss });
    } else if (msg.cmd === 'exit') {
      process.exit(0);
    }
  });
}
