import { createHash } from 'node:crypto';
import type { SearchResult } from '../search/events';
import { hasLegalSuffix } from './extract';

/** A web lead as the report shows it. Every lead is unverified: it is what a search returned. */
export interface Sample {
  readonly entry_id: string;
  readonly title: string;
  /** The first date the page text shows (YYYY-MM-DD), '' when none. */
  readonly date: string;
  /** `official` for a page on one of its search's official domains (the catalog's `official_sources`), else `web`. */
  readonly source_type: 'official' | 'web';
  readonly source_url: string;
  readonly excerpt: string;
  readonly page_published_at: string;
  readonly verification_status: 'unverified';
  readonly retrieval_method: 'search_api';
  /** The sample fields this page could not fill. */
  readonly fields_missing: readonly string[];
}

const EXCERPT_CHARS = 240;

function normalize(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** Is the page's host one of the official domains, or a subdomain of one? */
export function isOfficialUrl(url: string, officialDomains: readonly string[]): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return officialDomains.some((d) => host === d || host.endsWith(`.${d}`));
}

/** Does the text contain the name at all (also inside a longer name)? */
export function mentionsName(text: string, name: string): boolean {
  return normalize(text).includes(normalize(name));
}

const NAME_CHAR = /[\u4e00-\u9fa5A-Za-z0-9]/u;
/** What continues a name that has no legal suffix yet: `松川物流` in `松川物流(深圳)有限公司`. */
const CONTINUES = /[\u4e00-\u9fa5A-Za-z0-9(]/u;
/** Words after which a name starts even without punctuation: party roles and field labels. */
const ROLE_BEFORE = /(?:原告|被告|上诉人|被上诉人|申请人|被申请人|申请执行人|被执行人|第三人|当事人|受送达人|纳税人名称|纳税人|企业名称|公司名称|名称|与|和|及|对|关于)$/u;
/** A branch or office of the company is another party: `…有限公司北京分公司`. */
const BRANCH_AFTER = /^(?:[（(][^）)]{1,10}[）)])?[\u4e00-\u9fa5]{0,8}(?:分公司|分厂|办事处|营业部|分店|支行|分行)/u;

/**
 * Does the text name exactly this company, not a longer name that contains it? An occurrence
 * counts when it starts the text, follows a non-name character or a party role / field label
 * (`被告`, `纳税人名称：`…), and is not continued into a branch (`…分公司`) or, for a name without
 * a legal suffix, into any longer word or a bracketed place (`…(深圳)有限公司`; compared in NFKC). Chinese has no word boundaries, so this is conservative:
 * a doubtful mention hides a card, it never shows one about another company.
 */
export function mentionsExactName(text: string, name: string): boolean {
  const haystack = text.normalize('NFKC');
  const needle = name.normalize('NFKC');
  if (needle === '') return false;
  const complete = hasLegalSuffix(needle);
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) {
    const before = haystack.slice(0, i);
    const after = haystack.slice(i + needle.length);
    const leftOk = i === 0 || !NAME_CHAR.test(before[before.length - 1]!) || ROLE_BEFORE.test(before);
    const rightOk = !BRANCH_AFTER.test(after) && (complete || after === '' || !CONTINUES.test(after[0]!));
    if (leftOk && rightOk) return true;
  }
  return false;
}

const DATE = /(\d{4})\s*[-年/.]\s*(\d{1,2})\s*[-月/.]\s*(\d{1,2})/;

/** The first date written in the text, as YYYY-MM-DD, or ''. */
export function firstDate(text: string): string {
  const m = DATE.exec(text);
  if (!m) return '';
  const [mo, d] = [Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return '';
  return `${m[1]}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

export function toSample(result: SearchResult, officialDomains: readonly string[]): Sample {
  const date = firstDate(`${result.snippet} ${result.title}`);
  const excerpt = [...result.snippet].length > EXCERPT_CHARS ? `${[...result.snippet].slice(0, EXCERPT_CHARS).join('')}…` : result.snippet;
  const fields: Record<string, string> = { title: result.title, excerpt, date, page_published_at: result.published_at };
  return {
    entry_id: `ev_${createHash('sha256').update(result.url).digest('hex').slice(0, 16)}`,
    title: result.title,
    date,
    source_type: isOfficialUrl(result.url, officialDomains) ? 'official' : 'web',
    source_url: result.url,
    excerpt,
    page_published_at: result.published_at,
    verification_status: 'unverified',
    retrieval_method: 'search_api',
    fields_missing: Object.entries(fields)
      .filter(([, value]) => value === '')
      .map(([field]) => field),
  };
}
