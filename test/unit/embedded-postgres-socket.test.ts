import { expect } from 'chai';
import { unixSocketDir } from '../../src/db/embedded-postgres';

describe('the embedded server\'s Unix socket directory', () => {
  it('is the data directory, made absolute, while the socket path fits the kernel\'s 107 bytes', () => {
    expect(unixSocketDir('/tmp/gateway-test-pg-abc/data', 54321)).to.equal('/tmp/gateway-test-pg-abc/data');
    expect(unixSocketDir('relative/data', 5432)).to.equal(`${process.cwd()}/relative/data`);
    const longest = '/' + 'd'.repeat(107 - '/.s.PGSQL.54321'.length - 1);
    expect(unixSocketDir(longest, 54321)).to.equal(longest);
  });

  it('is none (TCP only) for a longer path, or one the server setting cannot quote plainly', () => {
    const tooLong = '/' + 'd'.repeat(107 - '/.s.PGSQL.54321'.length);
    expect(unixSocketDir(tooLong, 54321)).to.equal(null);
    expect(unixSocketDir('/tmp/with space/data', 5432)).to.equal(null);
    expect(unixSocketDir('/tmp/a,b/data', 5432)).to.equal(null);
  });
});
