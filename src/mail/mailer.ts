/** One email, as the domain writes it: a plain-text body and the same in simple HTML. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * What the domain sends email through. The composition root hands one to the services when
 * `SMTP_URL` is set (`smtp-mailer.ts`), none otherwise; the domain never sees the transport.
 */
export interface Mailer {
  /** Resolves once the server accepted the message; rejects when it could not be handed over. */
  send(mail: OutgoingMail): Promise<void>;
  /** Closes the transport's connections. */
  close(): void;
}
