import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PACKAGE_ROOT, packageRootAbove } from '../../src/package-root';
import { DEFAULT_WEB_ROOT } from '../../src/dashboard/pages';

const ROOT = path.resolve(__dirname, '../..');

describe('the package root, from the sources and from their build in dist/', () => {
  it('is the directory of package.json, whether a module runs from src/ or from dist/src/', () => {
    expect(PACKAGE_ROOT).to.equal(ROOT);
    expect(packageRootAbove(path.join(ROOT, 'src', 'dashboard'))).to.equal(ROOT);
    // The build's directories need not exist for the walk: dist/ holds no package.json.
    expect(packageRootAbove(path.join(ROOT, 'dist', 'src', 'dashboard'))).to.equal(ROOT);
    expect(DEFAULT_WEB_ROOT).to.equal(path.join(ROOT, 'web', 'dist'));
  });

  it('is the nearest package.json above, and an error where there is none', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'package-root-'));
    try {
      fs.mkdirSync(path.join(dir, 'inner', 'dist', 'src'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'inner', 'package.json'), '{}');
      expect(packageRootAbove(path.join(dir, 'inner', 'dist', 'src'))).to.equal(path.join(dir, 'inner'));
      expect(() => packageRootAbove(dir)).to.throw(/no package\.json above/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
