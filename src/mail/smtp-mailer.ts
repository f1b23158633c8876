import nodemailer from 'nodemailer';
import type { Mailer, OutgoingMail } from './mailer';

/** How long connecting, greeting and an idle socket may take: a stuck server fails a send, it does not hold it. */
const TIMEOUT_MS = 15_000;

/**
 * A Mailer over SMTP with nodemailer: `smtp://user:password@host:port` (STARTTLS when the
 * server offers it) or `smtps://…` (TLS from the start), sending as `from`.
 */
export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  const url = new URL(smtpUrl);
  const transport = nodemailer.createTransport({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
    secure: url.protocol === 'smtps:',
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
  });
  return {
    async send(mail: OutgoingMail): Promise<void> {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
    },
    close: () => transport.close(),
  };
}
