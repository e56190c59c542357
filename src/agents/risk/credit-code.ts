/**
 * The Unified Social Credit Code (统一社会信用代码) of GB 32100-2015: 18 characters, the last a
 * check character over the first 17. A code that fails the check is a typo or a fabrication, and
 * is never treated as identifying a company.
 */

/** The code's alphabet: digits and upper-case letters without I, O, Z, S and V. */
export const CREDIT_CODE_ALPHABET = '0123456789ABCDEFGHJKLMNPQRTUWXY';

/** Weight of position i (0-based) is 3^i mod 31. */
const WEIGHTS: readonly number[] = Array.from({ length: 17 }, (_, i) => {
  let w = 1;
  for (let k = 0; k < i; k++) w = (w * 3) % 31;
  return w;
});

/** Registration authority, entity type, 6-digit region code, 9-character organisation code, check character. */
const SHAPE = /^[0-9A-HJ-NPQRTUWXY]{2}\d{6}[0-9A-HJ-NPQRTUWXY]{10}$/;

/** The check character the first 17 characters call for, or null when they are not in the alphabet. */
export function creditCodeCheckCharacter(first17: string): string | null {
  if (first17.length !== 17) return null;
  let sum = 0;
  for (let i = 0; i < 17; i++) {
    const value = CREDIT_CODE_ALPHABET.indexOf(first17[i]!);
    if (value < 0) return null;
    sum += value * WEIGHTS[i]!;
  }
  return CREDIT_CODE_ALPHABET[(31 - (sum % 31)) % 31]!;
}

/** True when `code` has the shape of a credit code (whatever its check character says). */
export function looksLikeCreditCode(code: string): boolean {
  return SHAPE.test(code);
}

/** True only for a well-formed code whose 18th character is the one its first 17 call for. */
export function isValidCreditCode(code: string): boolean {
  return looksLikeCreditCode(code) && creditCodeCheckCharacter(code.slice(0, 17)) === code[17];
}

/**
 * Every token of `text` shaped like a credit code, upper-cased, in order of appearance and without
 * repeats, with its validity. Tokens are delimited by anything that is not an ASCII letter or digit.
 */
export function findCreditCodes(text: string): { code: string; valid: boolean }[] {
  const seen = new Set<string>();
  const found: { code: string; valid: boolean }[] = [];
  for (const match of text.matchAll(/(?<![0-9A-Za-z])[0-9A-Za-z]{18}(?![0-9A-Za-z])/g)) {
    const code = match[0].toUpperCase();
    if (!looksLikeCreditCode(code) || seen.has(code)) continue;
    seen.add(code);
    found.push({ code, valid: isValidCreditCode(code) });
  }
  return found;
}
