import { isPublicAddress, urlProblem } from './address-policy';

describe('address policy', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe',
    '224.0.0.1',
  ])('treats %s as non-public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])('treats %s as public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('rejects things that are not addresses', () => {
    expect(isPublicAddress('example.com')).toBe(false);
  });

  const strict = { allowInsecure: false, allowPrivate: false };
  it('accepts a public https URL', () => {
    expect(urlProblem('https://hooks.example.com/in?x=1', strict)).toBeUndefined();
  });

  it('requires https unless insecure URLs are allowed', () => {
    expect(urlProblem('http://hooks.example.com/in', strict)).toBe('url must use https://');
    expect(urlProblem('http://hooks.example.com/in', { ...strict, allowInsecure: true })).toBeUndefined();
    expect(urlProblem('ftp://hooks.example.com/in', { ...strict, allowInsecure: true })).toBe('url must use https:// or http://');
  });

  it('refuses local and private targets unless allowed', () => {
    const address = 'url must not point to a private, loopback or link-local address';
    const name = 'url must not point to a local host name';
    for (const [url, problem] of [
      ['https://127.0.0.1/x', address],
      ['https://[::1]/x', address],
      ['https://localhost/x', name],
      ['https://localhost./x', name],
      ['https://db.internal/x', name],
      ['https://169.254.169.254/latest', address],
    ]) {
      expect({ url, problem: urlProblem(url, strict) }).toEqual({ url, problem });
      expect(urlProblem(url, { ...strict, allowPrivate: true })).toBeUndefined();
    }
  });

  it('refuses credentials, fragments and garbage', () => {
    expect(urlProblem('https://user:pw@hooks.example.com/', strict)).toContain('credentials');
    expect(urlProblem('https://hooks.example.com/#x', strict)).toContain('fragment');
    expect(urlProblem('not a url', strict)).toContain('absolute URL');
  });
});
