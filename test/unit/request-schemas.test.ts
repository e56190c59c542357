import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import '../../src/gateway';
import type { ValidateFunction } from 'ajv';
import { compileEverySchema } from '../../src/http/validation';

/** Every source file under src/, relative to the repository. */
function sourceFiles(dir = 'src'): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(file) : file.endsWith('.ts') ? [file] : [];
  });
}

/**
 * Request schemas compile on first use (src/http/validation.ts), so a schema that ajv's strict mode
 * refuses would only show on its endpoint's first request. This compiles them all, as loaded by the
 * composition root: every module-level schema of src/ (counted in the source) must be among them.
 */
describe('request schemas', () => {
  it('all compile in strict mode, and the composition root loads every one of them', () => {
    const declaring = sourceFiles()
      .filter((file) => file !== path.join('src', 'http', 'validation.ts'))
      .map((file) => ({ file, schemas: fs.readFileSync(file, 'utf8').match(/^(?:export )?const \w+ = (?:validator|compiledOnFirstUse)\b/gm)?.length ?? 0 }))
      .filter(({ schemas }) => schemas > 0);
    const declared = declaring.reduce((sum, { schemas }) => sum + schemas, 0);
    expect(declared, 'schemas found in src/').to.be.greaterThan(20);
    expect(declaring.map(({ file }) => file).filter((file) => !(path.resolve(file) in require.cache)), 'modules with schemas the composition root does not load').to.deep.equal([]);
    // Other test files of this worker may have made schemas of their own.
    const checks = compileEverySchema();
    expect(checks.length).to.be.at.least(declared);
    for (const check of checks) expect(check).to.be.a('function');
  });

  it('make every `if` that tests a member’s value require that member (else it holds for an object without it)', () => {
    const unguarded: string[] = [];
    const visit = (schema: unknown, where: string): void => {
      if (schema === null || typeof schema !== 'object') return;
      const s = schema as Record<string, unknown>;
      const condition = s.if as { properties?: Record<string, unknown>; required?: string[] } | undefined;
      for (const member of Object.keys(condition?.properties ?? {})) {
        if (!(condition!.required ?? []).includes(member)) unguarded.push(`${where}/if: ${member}`);
      }
      for (const [key, value] of Object.entries(s)) visit(value, `${where}/${key}`);
    };
    for (const check of compileEverySchema() as ValidateFunction[]) visit(check.schema, String((check.schema as { title?: string }).title ?? '#'));
    expect(unguarded).to.deep.equal([]);
  });
});
