import type { SearchResult } from '../search/events';
import { isValidCreditCode } from './credit-code';
import { IDENTITY_DOMAIN, IDENTITY_LABEL } from './dimensions';
import { isOfficialUrl } from './evidence';
import { hasLegalSuffix, type Subject } from './extract';

export type IdentityStatus = 'matched' | 'user_provided' | 'company_unresolved';

/** The `company` member of a risk result. Unknown strings are '' (never a guess). */
export interface Company {
  /** What the client named: the name, else the credit code, as written. */
  readonly keyword: string;
  /** The legal name, only when `matched`. */
  readonly resolved_name: string;
  /** A check-character-valid code: the registry's when matched, else the client's (or ''). */
  readonly credit_code: string;
  /** The registration status an official document shows (e.g. 存续), when matched. */
  readonly status: string;
  readonly identity_status: IdentityStatus;
  readonly sources: readonly { readonly title: string; readonly url: string }[];
}

export interface Identity {
  readonly company: Company;
  /** The name the screening searches for; null: nothing to screen (no legal name for a bare code). */
  readonly screeningName: string | null;
  readonly warnings: readonly string[];
}

/** The identity search: the name (with the registry label), else the valid code; null when neither is usable. */
export function identityQuery(subject: Subject): { query: string; vertical: string } | null {
  if (subject.name) return { query: `${subject.name} ${IDENTITY_LABEL}`, vertical: IDENTITY_DOMAIN };
  if (subject.validCode) return { query: subject.validCode, vertical: IDENTITY_DOMAIN };
  return null;
}

/**
 * A second identity search, by the client's code, when the client gave a name and a code and no
 * official document the name search found labels that code: whose code it is decides whether the
 * pair is contradicted (the code is another company's). Null when there is nothing to look up.
 */
export function codeLookupQuery(subject: Subject, results: readonly SearchResult[], officialDomains: readonly string[]): { query: string; vertical: string } | null {
  if (!subject.name || !subject.validCode) return null;
  const known = officialDocuments(results, officialDomains).some((d) => d.code === subject.validCode);
  return known ? null : { query: subject.validCode, vertical: IDENTITY_DOMAIN };
}

interface IdentityDocument {
  readonly name: string;
  /** The name in NFKC, for comparisons (full- and half-width forms are the same name). */
  readonly comparable: string;
  readonly code: string;
  readonly codeValid: boolean;
  readonly status: string;
  readonly title: string;
  readonly url: string;
}

const NAME_LABEL = /(?:企业名称|公司名称|纳税人名称|名称)\s*[:：]\s*([^\s，,；;。|]+)/gu;
const CODE_LABEL = /统一社会信用代码\s*[:：]\s*([0-9A-Za-z]{18})(?![0-9A-Za-z])/gu;
const STATUS_LABEL = /(?:登记状态|经营状态)\s*[:：]\s*([^\s，,；;。|]+)/u;

/**
 * An official page's labelled identity: one `名称：` and one `统一社会信用代码：`. A page that labels
 * several names or codes (a list, a judgment between two companies) identifies nobody.
 */
function identityDocument(result: SearchResult): IdentityDocument | null {
  const text = `${result.title} ${result.snippet}`;
  // Names as the page writes them (full-width brackets stay); compared in NFKC below.
  const names = new Set([...text.matchAll(NAME_LABEL)].map((m) => m[1]!));
  const codes = new Set([...text.normalize('NFKC').matchAll(CODE_LABEL)].map((m) => m[1]!.toUpperCase()));
  if (names.size !== 1 || codes.size !== 1) return null;
  const code = [...codes][0]!;
  const name = [...names][0]!;
  return { name, comparable: name.normalize('NFKC'), code, codeValid: isValidCreditCode(code), status: STATUS_LABEL.exec(text)?.[1] ?? '', title: result.title, url: result.url };
}

function officialDocuments(results: readonly SearchResult[], officialDomains: readonly string[]): IdentityDocument[] {
  return results
    .filter((r) => isOfficialUrl(r.url, officialDomains))
    .map(identityDocument)
    .filter((d): d is IdentityDocument => d !== null);
}

/**
 * Official documents that contradict the client's name and code: the registry gives the code to
 * another company (`codeOwners`), or gives the full legal name another valid code (`nameCodes`).
 */
function contradictions(subject: Subject, docs: readonly IdentityDocument[], fitsName: (d: IdentityDocument) => boolean) {
  if (!subject.name || !subject.validCode) return null;
  const code = subject.validCode;
  const codeOwners = docs.filter((d) => d.code === code && !fitsName(d));
  // A partial name fits several companies legitimately; only a full name has one code.
  const nameCodes = hasLegalSuffix(subject.name.normalize('NFKC')) ? docs.filter((d) => fitsName(d) && d.codeValid && d.code !== code) : [];
  return codeOwners.length + nameCodes.length > 0 ? { code, codeOwners, nameCodes } : null;
}

function contradictionWarning(name: string, found: NonNullable<ReturnType<typeof contradictions>>): string {
  const cite = (docs: readonly IdentityDocument[]) => [...new Map(docs.map((d) => [`${d.name} ${d.code}`, d])).values()];
  const parts = [
    ...cite(found.codeOwners).map((d) => `credit code ${found.code} belongs to ${d.name} (${d.url})`),
    ...cite(found.nameCodes).map((d) => `${d.name} has credit code ${d.code} (${d.url})`),
  ];
  return (
    `official registry documents contradict the supplied name and credit code (${name}, ${found.code}): ${parts.join('; ')}; ` +
    `identity not matched, and ${found.code} is not used for ${name}`
  );
}

/**
 * The identity rules, exactly:
 * 1. `matched`: among official documents that fit what the client wrote (a full legal name must
 *    equal the labelled name, a partial name must be contained in it, a client's code must equal
 *    the labelled code), exactly one labelled name, carried with a check-character-valid code
 *    (one code only).
 * 2. Otherwise a supplied name gives `user_provided`: it is screened as written, unverified.
 * 3. A credit code without a resolved legal name gives `company_unresolved`: nothing to screen.
 * A name and a code that official documents contradict (the code is another company's, or the
 * full name has another code) are never `matched`: the name is screened as written, without a
 * code, and a warning names both companies and codes as found.
 * `results` is null when no identity search answered.
 */
export function resolveIdentity(subject: Subject, results: readonly SearchResult[] | null, officialDomains: readonly string[]): Identity {
  const warnings = subject.invalidCodes.map((c) => `credit code ${c} fails the GB 32100-2015 check character; it was not used`);
  const keyword = subject.name ?? subject.validCode ?? subject.invalidCodes[0] ?? '';
  const name = subject.name?.normalize('NFKC') ?? null;
  const docs = officialDocuments(results ?? [], officialDomains);
  const fitsName = (d: IdentityDocument) => (name === null ? true : hasLegalSuffix(name) ? d.comparable === name : d.comparable.includes(name));
  const fitting = docs.filter(fitsName).filter((d) => subject.validCode === null || d.code === subject.validCode);
  const sourcesOf = (docs: readonly IdentityDocument[]) => docs.map((d) => ({ title: d.title, url: d.url }));

  const contradicted = contradictions(subject, docs, fitsName);
  if (contradicted && subject.name) {
    warnings.push(contradictionWarning(subject.name, contradicted));
    // Sources are the documents about the named company only: the code owner's page names its code.
    return {
      company: { keyword, resolved_name: '', credit_code: '', status: '', identity_status: 'user_provided', sources: sourcesOf([...fitting, ...contradicted.nameCodes]) },
      screeningName: subject.name,
      warnings,
    };
  }

  const names = new Set(fitting.map((d) => d.comparable));
  if (names.size === 1) {
    const valid = fitting.filter((d) => d.codeValid);
    const codes = new Set(valid.map((d) => d.code));
    if (codes.size === 1) {
      const resolved = valid[0]!;
      return {
        company: { keyword, resolved_name: resolved.name, credit_code: resolved.code, status: resolved.status, identity_status: 'matched', sources: sourcesOf(valid) },
        screeningName: resolved.name,
        warnings,
      };
    }
    for (const d of fitting.filter((doc) => !doc.codeValid)) warnings.push(`the official document ${d.url} shows credit code ${d.code}, which fails the check character; identity not matched`);
    if (codes.size > 1) warnings.push(`official documents show different credit codes for ${[...names][0]}; identity not matched`);
  } else if (names.size > 1) {
    warnings.push(`the name "${keyword}" fits ${names.size} companies in official documents (${[...new Set(fitting.map((d) => d.name))].join(', ')}); identity not matched`);
  }

  if (subject.name) {
    if (results === null) warnings.push('the identity search failed; the name is screened as written');
    warnings.push(`identity not verified: "${subject.name}" is screened as written, without registry verification`);
    return {
      company: { keyword, resolved_name: '', credit_code: subject.validCode ?? '', status: '', identity_status: 'user_provided', sources: sourcesOf(fitting) },
      screeningName: subject.name,
      warnings,
    };
  }
  warnings.push(
    subject.validCode
      ? `no legal name was resolved for credit code ${subject.validCode}; the dimensions were not screened`
      : 'no valid credit code or company name was given; nothing was screened',
  );
  return {
    company: { keyword, resolved_name: '', credit_code: subject.validCode ?? '', status: '', identity_status: 'company_unresolved', sources: sourcesOf(fitting) },
    screeningName: null,
    warnings,
  };
}
