/**
 * The nine screening dimensions: one web search each, for the company name plus the dimension's
 * label, on the dimension's official source domains (the risk agent's catalog entry,
 * `official_sources`, model-types.ts).
 */
export interface Dimension {
  readonly data_type: DimensionType;
  /**
   * The report's `domain`, the search vertical: `sifa` (courts) or `shuiwu` (tax). It keys the
   * search cache with the query; the provider is sent the dimension's domains instead.
   */
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

/** The vertical of the identity search (business registry documents): the cache key's, like a dimension's `domain`. */
export const IDENTITY_DOMAIN = 'gongshang';

/** The label the identity query adds to a name, so that registry pages rank first. */
export const IDENTITY_LABEL = '统一社会信用代码';

export function dimensionQuery(name: string, dimension: Dimension): string {
  return `${name} ${dimension.label}`;
}
