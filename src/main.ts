import { ConfigError, loadConfig } from './config';
import { createService } from './bootstrap';
import { DataDirInUseError } from './db/embedded';
import { MasterKeyMismatchError } from './crypto/master-key';

/** `npm start`: validate configuration, open the database, listen, shut down gracefully. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }

  const service = await createService(config);
  const log = service.app.log;
  if (service.runtime.generatedMasterKeyFile) {
    log.warn(
      { file: service.runtime.generatedMasterKeyFile },
      'MASTER_KEY is not set: secrets at rest are sealed with a key generated in DATA_DIR. Set MASTER_KEY in production.',
    );
  }
  log.info({ database: service.runtime.db.mode }, 'database ready');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // The contract: exit within 10 s of SIGTERM, whatever is still running.
    const force = setTimeout(() => {
      log.error('shutdown took longer than 9.5 s; exiting');
      process.exit(1);
    }, 9_500);
    force.unref();
    service
      .close()
      .then(() => process.exit(0))
      .catch((err) => {
        log.error({ err }, 'error during shutdown');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  await service.app.listen({ port: config.port, host: config.host });
}

main().catch((err) => {
  if (err instanceof MasterKeyMismatchError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  if (err instanceof DataDirInUseError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
