import { expect } from 'chai';
import { CREDIT_CODE_ALPHABET, creditCodeCheckCharacter, findCreditCodes, isValidCreditCode, looksLikeCreditCode } from '../../src/agents/risk/credit-code';

describe('Unified Social Credit Code check character (GB 32100-2015)', () => {
  it('accepts public valid codes', () => {
    for (const code of ['91110000600037341L', '91310115MA1K3BTP2B']) {
      expect(isValidCreditCode(code), code).to.equal(true);
      expect(creditCodeCheckCharacter(code.slice(0, 17)), code).to.equal(code[17]);
    }
  });

  it('refuses a code whose check character is wrong, and every other wrong check character', () => {
    expect(isValidCreditCode('91110000600037341N')).to.equal(false);
    const first17 = '91110000600037341';
    const wrong = [...CREDIT_CODE_ALPHABET].filter((c) => c !== 'L');
    expect(wrong).to.have.length(30);
    for (const c of wrong) expect(isValidCreditCode(first17 + c), c).to.equal(false);
  });

  it('computes the check character from weights 3^i mod 31 over the 31-character alphabet', () => {
    // Σ value × weight for 91110000600037341, done by hand: the check value is 31 − (Σ mod 31).
    const weights = [1, 3, 9, 27, 19, 26, 16, 17, 20, 29, 25, 13, 8, 24, 10, 30, 28];
    const digits = [...'91110000600037341'].map((c) => CREDIT_CODE_ALPHABET.indexOf(c));
    const sum = digits.reduce((acc, v, i) => acc + v * weights[i]!, 0);
    expect(CREDIT_CODE_ALPHABET[(31 - (sum % 31)) % 31]).to.equal('L');
    expect(CREDIT_CODE_ALPHABET).to.have.length(31);
    expect(CREDIT_CODE_ALPHABET).not.to.match(/[IOSVZ]/);
  });

  it('refuses malformed codes: wrong length, letters outside the alphabet, letters in the region code', () => {
    expect(isValidCreditCode('91110000600037341')).to.equal(false);
    expect(isValidCreditCode('91110000600037341LL')).to.equal(false);
    expect(looksLikeCreditCode('9111000060003734IL')).to.equal(false); // I is not in the alphabet
    expect(looksLikeCreditCode('91A10000600037341L')).to.equal(false); // the region code is six digits
    expect(creditCodeCheckCharacter('9111000060003734O')).to.equal(null);
  });

  it('finds code-shaped tokens in text, upper-cased, with their validity, and ignores other tokens', () => {
    const found = findCreditCodes('请查 91310115ma1k3btp2b 和 91110000600037341N，还有 internationalization 以及 91110000600037341L。');
    expect(found).to.deep.equal([
      { code: '91310115MA1K3BTP2B', valid: true },
      { code: '91110000600037341N', valid: false },
      { code: '91110000600037341L', valid: true },
    ]);
    expect(findCreditCodes('X91110000600037341L')).to.deep.equal([]); // part of a longer token
  });
});
