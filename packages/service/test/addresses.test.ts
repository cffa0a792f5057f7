import { internalRange } from '@kn/service';

test.each([
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local'],
  ['100.64.0.1', 'shared (CGNAT)'],
  ['100.127.255.255', 'shared (CGNAT)'],
  ['0.0.0.0', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['255.255.255.255', 'reserved'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fc00::1', 'private'],
  ['fdff:ffff::1', 'private'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:a9fe:a9fe', 'link-local'],
  ['::ffff:0:10.0.0.1', 'private'],
  ['64:ff9b::192.168.0.1', 'private'],
  ['2002:a00:1::1', 'private'],
  ['::127.0.0.1', 'reserved'],
  ['[::1]', 'loopback'],
])('%s is %s', (address, range) => {
  expect(internalRange(address)).toBe(range);
});

test.each([
  '8.8.8.8',
  '93.184.215.14',
  '172.32.0.1',
  '172.15.255.255',
  '100.128.0.1',
  '169.253.0.1',
  '2606:4700:4700::1111',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  'fbff::1',
])('%s is public', (address) => {
  expect(internalRange(address)).toBeNull();
});

test('not an address', () => {
  expect(() => internalRange('localhost')).toThrow('not an IP address');
});
