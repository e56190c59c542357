import { findCreditCodes, looksLikeCreditCode } from './credit-code';

/** Who the client asks about, as written in its messages. */
export interface Subject {
  /** A company name (full legal name or a part of one), or null. */
  readonly name: string | null;
  /** The newest credit code whose check character is right, or null. */
  readonly validCode: string | null;
  /** Code-shaped tokens whose check character is wrong: never used, only warned about. */
  readonly invalidCodes: readonly string[];
}

export interface TextMessage {
  readonly role: string;
  readonly content: string;
}

/** Legal-form endings of Chinese company names, longest first. */
const LEGAL_SUFFIX = /(?:股份有限公司|有限责任公司|有限公司|合伙企业|公司)$/;
const LEGAL_SUFFIX_EN = /(?:Co\.,?\s*Ltd\.?|Limited|Inc\.?|LLC|Corporation|Corp\.?|GmbH|PLC)$/i;

export function hasLegalSuffix(name: string): boolean {
  return LEGAL_SUFFIX.test(name) || LEGAL_SUFFIX_EN.test(name);
}

const QUOTED = /[「『“"《]([^」』”"》\n]{2,60})[」』”"》]/;
// A label word starts the text or follows a non-Chinese character: `…有限公司：` is not a label.
const LABELLED = /(?<![\u4e00-\u9fa5])(?:公司名称|企业名称|公司|企业|名称|company|name)\s*[:：]\s*([^\s，,；;。!！?？、]{2,60})/i;
// The prefix is lazy, so the name ends at its first legal suffix; `集团` is allowed before it.
const CHINESE_NAME = /[\u4e00-\u9fa5A-Za-z0-9（）()·&]{2,60}?(?:集团)?(?:股份有限公司|有限责任公司|有限公司|合伙企业|公司)/u;
const ENGLISH_NAME = /[A-Z][A-Za-z0-9&.'-]*(?:\s+[A-Z][A-Za-z0-9&.'-]*)*,?\s+(?:Co\.,?\s*Ltd\.?|Limited|Inc\.?|LLC|Corporation|Corp\.?|GmbH|PLC)/;
// Words of a request that the unsegmented Chinese name pattern picks up in front of a name.
const LEADING_FILLER = /^(?:请问|请|麻烦|帮我|帮忙|给我|我想|我要|想要|了解一下|了解|知道|问下|查询|查一下|查查|筛查|调查|核查|核实|审查|排查|尽职调查|尽调|分析|评估|看看|看一下|看下|一下|关于|这家|该)+/u;

/**
 * The company a conversation is about: the newest user message that names one gives the name, the
 * newest that carries a credit-code-shaped token gives the code(s). A name is taken, in this order,
 * from quotes (「…」, “…”, "…", 《…》), a label (`公司：…`, `company: …`), or a name with a legal
 * suffix (…有限公司, … Co., Ltd.). Quoting is the reliable way to name a partial or unusual name.
 */
export function extractSubject(messages: readonly TextMessage[]): Subject {
  let name: string | null = null;
  let codes: { code: string; valid: boolean }[] | null = null;
  for (let i = messages.length - 1; i >= 0 && (name === null || codes === null); i--) {
    const message = messages[i]!;
    if (message.role !== 'user') continue;
    const text = message.content;
    const found = findCreditCodes(text);
    if (codes === null && found.length > 0) codes = found;
    if (name === null) {
      // Codes are not names: take them out before looking for one.
      name = findName(text.replace(/(?<![0-9A-Za-z])[0-9A-Za-z]{18}(?![0-9A-Za-z])/g, (token) => (looksLikeCreditCode(token.toUpperCase()) ? ' ' : token)));
    }
  }
  return {
    name,
    validCode: codes?.find((c) => c.valid)?.code ?? null,
    invalidCodes: (codes ?? []).filter((c) => !c.valid).map((c) => c.code),
  };
}

function findName(text: string): string | null {
  const quoted = QUOTED.exec(text)?.[1]?.trim();
  if (quoted) return quoted;
  const labelled = LABELLED.exec(text)?.[1]?.trim();
  if (labelled) return labelled;
  const chinese = CHINESE_NAME.exec(text)?.[0].replace(LEADING_FILLER, '');
  if (chinese && chinese.length >= 2 && !/^(?:公司|有限公司)$/.test(chinese)) return chinese;
  return ENGLISH_NAME.exec(text)?.[0].trim() ?? null;
}
