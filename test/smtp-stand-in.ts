import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/*
 * A real SMTP server on a free loopback port, standing in for the company's mail relay: every mail
 * the notifications service sends arrives in `mails`; `refuseNext(n)` answers the next n with 451.
 */

export interface Mail {
  to: string[];
  raw: string;
}

export async function startSmtpStandIn() {
  const mails: Mail[] = [];
  let refusals = 0;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (c: Buffer) => {
        raw += c.toString('utf8');
      });
      stream.on('end', () => {
        if (refusals > 0) {
          refusals--;
          const err = new Error('mailbox temporarily unavailable') as Error & { responseCode: number };
          err.responseCode = 451;
          return callback(err);
        }
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return {
    mails,
    url: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    /** The mails sent to this address so far. */
    mailsTo: (email: string) => mails.filter((m) => m.to.includes(email)),
    refuseNext(n: number) {
      refusals = n;
    },
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}
