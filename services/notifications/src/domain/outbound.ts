import { type LookupAddress, lookup } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { internalRange } from '@kn/service';

/** A receiver on an address that is not public, while WEBHOOK_ALLOW_INTERNAL is off: never contacted. */
export class RefusedTarget extends Error {
  override name = 'RefusedTarget';
}

const hint = 'not on the internet; set WEBHOOK_ALLOW_INTERNAL=true for a receiver inside your network';

/**
 * dns.lookup that refuses a name resolving to any non-public address. The connection goes to an
 * address this function returned, so a name that resolved to a public address when the URL was
 * set and to an internal one now (DNS rebinding) is caught here, at the connection itself.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    for (const { address } of addresses) {
      const range = internalRange(address);
      if (range) return callback(new RefusedTarget(`${hostname} resolves to ${address}, a ${range} address, ${hint}`), '', 0);
    }
    if (options.all) return callback(null, addresses);
    const [first] = addresses;
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
    callback(null, first.address, first.family);
  });
};

/**
 * POSTs a body and answers the status code, not following redirects. Unless `allowInternal`, the
 * receiver's address is checked as the connection is made (a literal IP before, a name as it is
 * resolved, each time): a non-public one throws RefusedTarget without any traffic to it.
 */
export function outboundPoster(options: { allowInternal: boolean; timeoutMs: number }) {
  const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };
  return {
    post(url: string, headers: Record<string, string>, body: string): Promise<number> {
      const target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:')
        return Promise.reject(new RefusedTarget(`${target.protocol} is not http(s)`));
      const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
      const range = !options.allowInternal && isIP(host) ? internalRange(host) : null;
      if (range) return Promise.reject(new RefusedTarget(`${host} is a ${range} address, ${hint}`));
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const signal = AbortSignal.timeout(options.timeoutMs);
      return new Promise<number>((resolve, reject) => {
        const req = send(
          target,
          {
            method: 'POST',
            headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
            agent: agents[target.protocol as 'http:' | 'https:'],
            lookup: options.allowInternal ? undefined : publicOnlyLookup,
            signal,
          },
          (res) => {
            res.resume();
            res.once('end', () => resolve(res.statusCode ?? 0));
            res.once('error', (err) => reject(signal.aborted ? signal.reason : err));
          },
        );
        req.once('error', (err) => reject(signal.aborted ? signal.reason : err));
        req.end(body);
      });
    },
    stop() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
