import { ipLiteralOf, publicAddressesOnly } from '../../../src/adapters/tools/publicAddresses.js';

describe('public addresses (what webhook runs may fetch)', () => {
  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '::8.8.8.8', '::808:808'])(
    'takes the public address %s',
    (address) => {
      expect(publicAddressesOnly(address)).toBe(true);
    },
  );

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'IPv6 loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local: cloud metadata'],
    ['fe80::1', 'IPv6 link-local'],
    ['fd00:ec2::254', 'unique-local: cloud metadata over IPv6'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'IPv6 unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'documentation'],
    ['::ffff:127.0.0.1', 'loopback inside an IPv4-mapped IPv6 address'],
    ['::ffff:10.0.0.1', 'private inside an IPv4-mapped IPv6 address'],
    ['::127.0.0.1', 'loopback inside an IPv4-compatible IPv6 address'],
    ['::7f00:1', 'loopback inside an IPv4-compatible IPv6 address, as a URL writes it'],
    ['0:0:0:0:0:0:127.0.0.1', 'loopback inside an IPv4-compatible IPv6 address, written out'],
    ['::a9fe:a9fe', 'cloud metadata inside an IPv4-compatible IPv6 address'],
    ['::169.254.169.254', 'cloud metadata inside an IPv4-compatible IPv6 address'],
    ['::10.0.0.1', 'private inside an IPv4-compatible IPv6 address'],
    ['::c0a8:101', 'private inside an IPv4-compatible IPv6 address'],
    ['::1', 'IPv6 loopback, though inside ::/96'],
    ['64:ff9b::a00:1', 'NAT64 of a private address'],
    ['2002:a00:1::', '6to4 of a private address'],
    ['not an address', 'no address at all'],
  ])('refuses %s (%s)', (address) => {
    expect(publicAddressesOnly(address)).toBe(false);
  });

  it('tells an IP address in a URL from a name', () => {
    expect(ipLiteralOf(new URL('http://10.0.0.1:8080/x'))).toBe('10.0.0.1');
    expect(ipLiteralOf(new URL('http://[::1]/'))).toBe('::1');
    expect(ipLiteralOf(new URL('http://0x7f000001/'))).toBe('127.0.0.1');
    expect(ipLiteralOf(new URL('https://example.com/'))).toBeNull();
  });
});
