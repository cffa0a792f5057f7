import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * Which addresses are not the public internet: where an outgoing request chosen by an
 * administrator (a webhook URL) must not go unless an operator allows it, because they reach the
 * machines around ours (cloud metadata at 169.254.169.254, databases, admin pages) rather than a
 * receiver on the internet.
 */
const IPV4_RANGES: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const ipv4Number = (address: string) => address.split('.').reduce((n, part) => n * 256 + Number(part), 0);

function ipv4Range(address: string): string | null {
  const n = ipv4Number(address);
  for (const [base, bits, name] of IPV4_RANGES) {
    const size = 2 ** (32 - bits);
    if (Math.floor(n / size) === Math.floor(ipv4Number(base) / size)) return name;
  }
  return null;
}

/** The eight 16-bit words of an IPv6 address (zone index dropped, an embedded dotted IPv4 read). */
export function ipv6Words(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = ipv4Number(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const words = (part: string | undefined) => (part ? part.split(':').map((w) => Number.parseInt(w, 16)) : []);
  const front = words(head);
  const back = words(tail);
  return tail === undefined ? front : [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
}

const embeddedIpv4 = (hi: number, lo: number) => `${hi >>> 8}.${hi & 0xff}.${lo >>> 8}.${lo & 0xff}`;

function ipv6Range(address: string): string | null {
  const w = ipv6Words(address);
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && w[7] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 address inside.
  if (zeros(0, 5) && w[5] === 0xffff) return ipv4Range(embeddedIpv4(w[6]!, w[7]!));
  if (zeros(0, 4) && w[4] === 0xffff && w[5] === 0) return ipv4Range(embeddedIpv4(w[6]!, w[7]!)); // IPv4-translated
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return ipv4Range(embeddedIpv4(w[6]!, w[7]!));
  // 6to4 (2002:a.b.c.d::/48) carries an IPv4 address in its second and third words.
  if (w[0] === 0x2002) return ipv4Range(embeddedIpv4(w[1]!, w[2]!));
  if (zeros(0, 6)) return 'reserved'; // IPv4-compatible (::a.b.c.d), deprecated
  if (w[0] === 0x64 && w[1] === 0xff9b && w[2] === 1) return 'private'; // local-use NAT64
  if (w[0] === 0x100 && zeros(1, 4)) return 'reserved'; // discard-only
  if (w[0] === 0x2001 && w[1] === 0xdb8) return 'documentation';
  if ((w[0]! & 0xfe00) === 0xfc00) return 'private'; // unique local fc00::/7
  if ((w[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((w[0]! & 0xffc0) === 0xfec0) return 'private'; // site-local, deprecated
  if ((w[0]! & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/**
 * Why an IP address is not a public one (`loopback`, `private`, `link-local`, `unspecified`,
 * `shared (CGNAT)`, `multicast`, …), or null for a public address. IPv4 addresses inside IPv6
 * forms (IPv4-mapped, NAT64, 6to4) are judged as the IPv4 address they reach. Not an IP address:
 * an error.
 */
export function internalRange(address: string): string | null {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare.replace(/%.*$/, ''));
  if (family === 4) return ipv4Range(bare);
  if (family === 6) return ipv6Range(bare);
  throw new Error(`not an IP address: ${address}`);
}

/** Names that are the local machine whatever DNS says (RFC 6761). */
export const isLocalhostName = (hostname: string) => /(^|\.)localhost\.?$/i.test(hostname);

/**
 * What is wrong with a URL as the target of requests this system sends on an administrator's
 * behalf (webhooks), or null: credentials in it (they would be stored and shown with the URL; a
 * receiver authenticates our requests by their signature), and, unless `allowInternal`, a host that
 * is or resolves to an address that is not public (`internalRange`). A name that does not resolve
 * (yet) passes: the sender checks each address again when it connects.
 */
export async function outboundUrlProblem(
  url: string,
  options: { allowInternal: boolean; resolveTimeoutMs?: number },
): Promise<string | null> {
  if (!URL.canParse(url)) return 'must be a URL';
  const { username, password, hostname } = new URL(url);
  if (username || password) return 'must not contain a user name or password';
  if (options.allowInternal) return null;
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) {
    const range = internalRange(host);
    return range && `${host} is a ${range} address, not one on the internet`;
  }
  if (isLocalhostName(host)) return `${host} is this machine, not an address on the internet`;
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    lookup(host, { all: true, verbatim: true }).catch(() => []),
    new Promise<[]>((resolve) => {
      timer = setTimeout(() => resolve([]), options.resolveTimeoutMs ?? 3000);
    }),
  ]).finally(() => clearTimeout(timer));
  for (const { address } of addresses) {
    const range = internalRange(address);
    if (range) return `${host} resolves to ${address}, a ${range} address, not one on the internet`;
  }
  return null;
}
