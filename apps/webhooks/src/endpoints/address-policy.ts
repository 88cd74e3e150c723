import { BlockList, isIP } from 'net';

/**
 * Addresses a webhook must never reach unless WEBHOOKS_ALLOW_PRIVATE=true: otherwise anyone who can
 * create a subscription could make this service probe the internal network (SSRF).
 */
const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, including cloud metadata endpoints
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64: may translate to any IPv4 address, private ones included
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

/** IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are judged by the IPv4 address they carry. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !nonPublic.check(address, 'ipv4');
  if (family === 6) return !nonPublic.check(address, 'ipv6');
  return false;
}

export interface UrlPolicy {
  allowInsecure: boolean;
  allowPrivate: boolean;
}

const LOCAL_NAMES = /(^|\.)(localhost|local|internal|localdomain)$/i;

/** Host of a URL without IPv6 brackets or the trailing dot of a fully qualified name. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/**
 * What is wrong with a subscription URL, or undefined when it may be stored. Host names are resolved
 * and checked again at every delivery, since DNS can change after this check.
 */
export function urlProblem(raw: string, policy: UrlPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL, e.g. https://example.com/webhooks';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowInsecure)) {
    return policy.allowInsecure ? 'url must use https:// or http://' : 'url must use https://';
  }
  if (url.username || url.password) return 'url must not contain credentials; verify requests with the signing secret instead';
  if (url.hash) return 'url must not contain a fragment';
  const host = bareHost(url);
  if (!host) return 'url must name a host';
  if (!policy.allowPrivate) {
    if (LOCAL_NAMES.test(host)) return 'url must not point to a local host name';
    if (isIP(host) && !isPublicAddress(host)) return 'url must not point to a private, loopback or link-local address';
  }
  return undefined;
}
