import fs from 'node:fs';
import path from 'node:path';

/**
 * The directory of the gateway's package.json: `__dirname`'s nearest ancestor that holds one. The
 * gateway runs from its build (`dist/src/…`, `npm start`) and from its sources (`src/…`, tests and
 * tools), so files beside the package (the built dashboard, the model catalog) are found from
 * here, not by a count of `..` that holds for only one of the two.
 */
export const PACKAGE_ROOT = packageRootAbove(__dirname);

export function packageRootAbove(dir: string, exists: (file: string) => boolean = fs.existsSync): string {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    if (exists(path.join(at, 'package.json'))) return at;
    if (path.dirname(at) === at) throw new Error(`no package.json above ${dir}`);
  }
}
