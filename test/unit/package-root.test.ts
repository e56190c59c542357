import path from 'node:path';
import { expect } from 'chai';
import { DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { DEFAULT_WEB_ROOT } from '../../src/dashboard/pages';
import { PACKAGE_ROOT, packageRootAbove } from '../../src/package-root';

const ROOT = path.resolve(__dirname, '../..');

describe('the package root, from the sources and from their build in dist/', () => {
  it('is the directory of package.json, whether a module runs from src/ or from dist/src/', () => {
    expect(PACKAGE_ROOT).to.equal(ROOT);
    expect(packageRootAbove(path.join(ROOT, 'src', 'dashboard'))).to.equal(ROOT);
    // The build's directories need not exist for the walk: dist/ holds no package.json.
    expect(packageRootAbove(path.join(ROOT, 'dist', 'src', 'dashboard'))).to.equal(ROOT);
  });

  it('is where the built dashboard and the model catalog an operator edits are found, from either', () => {
    expect(DEFAULT_WEB_ROOT).to.equal(path.join(ROOT, 'web', 'dist'));
    // Not a copy in dist/: a reload re-reads the file that was edited.
    expect(DEFAULT_CATALOG_FILE).to.equal(path.join(ROOT, 'src', 'billing', 'catalog.json'));
  });

  it('is the nearest package.json above, and an error where there is none', () => {
    const files = new Set(['/srv/app/package.json', '/srv/package.json']);
    const exists = (file: string) => files.has(file);
    expect(packageRootAbove('/srv/app/dist/src/dashboard', exists)).to.equal('/srv/app');
    expect(packageRootAbove('/srv/app', exists)).to.equal('/srv/app');
    expect(packageRootAbove('/srv/other/src', exists)).to.equal('/srv');
    expect(() => packageRootAbove('/opt/x', exists)).to.throw(/no package\.json above \/opt\/x/);
  });
});
