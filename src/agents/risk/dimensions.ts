/**
 * The nine screening dimensions: one web search each, in the search vertical (`domain`) of its
 * source, for the company name plus the dimension's label.
 */
export interface Dimension {
  readonly data_type: DimensionType;
  /** Search vertical: `sifa` (courts) or `shuiwu` (tax). */
  readonly domain: string;
  readonly label: string;
}

export type DimensionType = 'cpws' | 'zxgg' | 'shixin' | 'ktgg' | 'fygg' | 'sifacdk' | 'satparty_qs' | 'satparty_chufa' | 'satparty_fzc';

export const DIMENSIONS: readonly Dimension[] = [
  { data_type: 'cpws', domain: 'sifa', label: '裁判文书' },
  { data_type: 'zxgg', domain: 'sifa', label: '执行公告' },
  { data_type: 'shixin', domain: 'sifa', label: '失信被执行人' },
  { data_type: 'ktgg', domain: 'sifa', label: '开庭公告' },
  { data_type: 'fygg', domain: 'sifa', label: '法院公告' },
  { data_type: 'sifacdk', domain: 'sifa', label: '司法查冻扣' },
  { data_type: 'satparty_qs', domain: 'shuiwu', label: '欠税公告' },
  { data_type: 'satparty_chufa', domain: 'shuiwu', label: '税务行政处罚' },
  { data_type: 'satparty_fzc', domain: 'shuiwu', label: '非正常户' },
];

/** The vertical of the identity search: business registry documents. */
export const IDENTITY_DOMAIN = 'gongshang';

/** The label the identity query adds to a name, so that registry pages rank first. */
export const IDENTITY_LABEL = '统一社会信用代码';

export function dimensionQuery(name: string, dimension: Dimension): string {
  return `${name} ${dimension.label}`;
}
