/**
 * The simulated web-search providers' index (Tavily's and Bocha's, simulator/providers/): a small,
 * fixed corpus of pages about fictional companies, shaped to exercise every rule of the risk
 * agent. The official pages sit on the hosts of the real official sites the catalog's risk agent
 * names (`www.gsxt.gov.cn`, `wenshu.court.gov.cn`, `zxgk.court.gov.cn`, `rmfygg.court.gov.cn`,
 * `tingshen.court.gov.cn`, `*.chinatax.gov.cn`), so that the domain filter and the official-page
 * rule run as they would against a real provider; their paths and contents are invented and exist
 * nowhere. The unofficial ones use the reserved `.example` TLD (`news.example.com`, the aggregator
 * `qiye.example.net`): a search restricted to official domains never finds them.
 *
 * The companies (every name and code is invented):
 * - 青峦数据科技有限公司, 91110108MA01QL8R3P (valid): a unique name in an official registry page,
 *   court and tax pages with and without the exact name, an unofficial rumour, a page with no
 *   dates, a 2017 tax notice (historical) next to 2024-2025 ones.
 * - 松川物流有限公司, 91440300MA5FC7WK2F (valid) and 松川物流（深圳）有限公司, 91440300MA5FC8DL6Y
 *   (valid): the partial name 松川物流 is ambiguous; each full name is unique.
 * - 白鹭湾餐饮管理有限公司: its registry page shows 91310104MA1BL6WN1E, whose check character is
 *   wrong (…1F would be valid), so it can never be matched.
 * - 云杉智能制造有限公司, 91510100MA6CYT2T7M (valid): only known to the unofficial aggregator.
 * - 91330106MA2H5YT944 (valid): a code with no company name anywhere.
 */

export interface CorpusPage {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
  /** ISO date the page shows as its publication date; '' when it shows none. */
  readonly published_at: string;
  /** Terms the page is indexed under besides its visible text, as a search engine's index adds. */
  readonly keywords: readonly string[];
}

export const FICTIONAL_COMPANIES = {
  qingluan: { name: '青峦数据科技有限公司', code: '91110108MA01QL8R3P' },
  songchuan: { name: '松川物流有限公司', code: '91440300MA5FC7WK2F' },
  songchuanShenzhen: { name: '松川物流（深圳）有限公司', code: '91440300MA5FC8DL6Y' },
  bailuwan: { name: '白鹭湾餐饮管理有限公司', code: '91310104MA1BL6WN1E' },
  yunshan: { name: '云杉智能制造有限公司', code: '91510100MA6CYT2T7M' },
  nameless: { code: '91330106MA2H5YT944' },
} as const;

export const CORPUS: readonly CorpusPage[] = [
  // 青峦数据科技有限公司
  {
    title: '青峦数据科技有限公司 - 企业信用信息公示',
    url: 'https://www.gsxt.gov.cn/corp/91110108MA01QL8R3P',
    snippet: '企业名称：青峦数据科技有限公司；统一社会信用代码：91110108MA01QL8R3P；登记状态：存续；成立日期：2019-04-12；登记机关：北京市海淀区市场监督管理局',
    published_at: '2025-06-01',
    keywords: ['工商信息'],
  },
  {
    title: '青峦数据科技有限公司与杭州溪石网络有限公司买卖合同纠纷一审民事判决书',
    url: 'https://wenshu.court.gov.cn/doc/2024-jing0108-minchu-12345',
    snippet: '原告：青峦数据科技有限公司，住所地北京市海淀区。被告：杭州溪石网络有限公司。案号：（2024）京0108民初12345号。裁判日期：2024-11-20。',
    published_at: '2024-12-02',
    keywords: ['裁判文书', '判决书'],
  },
  {
    title: '开庭公告：（2025）京0108民初2211号',
    url: 'https://tingshen.court.gov.cn/notice/2025-0318-2211',
    snippet: '原告：杭州溪石网络有限公司；被告：青峦数据科技有限公司；案由：服务合同纠纷；开庭时间：2025-03-18 09:30；地点：第十二法庭',
    published_at: '2025-03-01',
    keywords: ['开庭公告'],
  },
  {
    // An official page about another company whose name contains the screened one.
    title: '被执行人公告：北京青峦数据科技有限公司',
    url: 'https://zxgk.court.gov.cn/zhixing/2023-0506-778',
    snippet: '被执行人：北京青峦数据科技有限公司；执行标的：52000元；立案日期：2023-05-06；执行法院：北京市朝阳区人民法院',
    published_at: '2023-05-08',
    keywords: ['被执行人', '执行公告'],
  },
  {
    // An unofficial page with the exact name.
    title: '网传青峦数据科技有限公司被列为失信被执行人？',
    url: 'https://news.example.com/2025/01/qingluan-rumour',
    snippet: '有自媒体称：青峦数据科技有限公司被列入失信被执行人名单，记者未能在官方渠道核实。',
    published_at: '2025-01-10',
    keywords: ['失信被执行人'],
  },
  {
    // An official page without any date.
    title: '股权冻结公示',
    url: 'https://zxgk.court.gov.cn/cdk/2024-5521',
    snippet: '被执行人：青峦数据科技有限公司；冻结股权数额：100万元；执行法院：北京市海淀区人民法院',
    published_at: '',
    keywords: ['司法查冻扣', '股权冻结'],
  },
  {
    // An old official notice: historical, not current status.
    title: '欠税公告（2017年第3期）',
    url: 'https://beijing.chinatax.gov.cn/qsgg/2017/0302-118',
    snippet: '纳税人名称：青峦数据科技有限公司；欠税税种：增值税；欠税余额：18600元；公告日期：2017-03-02',
    published_at: '2017-03-05',
    keywords: ['欠税公告'],
  },

  // 松川物流有限公司 and 松川物流（深圳）有限公司
  {
    title: '松川物流有限公司 - 企业信用信息公示',
    url: 'https://www.gsxt.gov.cn/corp/91440300MA5FC7WK2F',
    snippet: '企业名称：松川物流有限公司；统一社会信用代码：91440300MA5FC7WK2F；登记状态：存续；成立日期：2016-08-30',
    published_at: '2025-05-20',
    keywords: ['工商信息'],
  },
  {
    title: '松川物流（深圳）有限公司 - 企业信用信息公示',
    url: 'https://www.gsxt.gov.cn/corp/91440300MA5FC8DL6Y',
    snippet: '企业名称：松川物流（深圳）有限公司；统一社会信用代码：91440300MA5FC8DL6Y；登记状态：注销；成立日期：2018-01-15',
    published_at: '2025-05-20',
    keywords: ['工商信息'],
  },
  {
    title: '税务行政处罚决定书（简易）',
    url: 'https://shenzhen.chinatax.gov.cn/chufa/2025/0214-907',
    snippet: '纳税人名称：松川物流有限公司；处罚事由：未按期申报；罚款金额：500元；处罚日期：2025-02-14',
    published_at: '2025-02-20',
    keywords: ['税务行政处罚'],
  },
  {
    title: '法院公告：松川物流（深圳）有限公司',
    url: 'https://rmfygg.court.gov.cn/notice/2024-0909-31',
    snippet: '受送达人：松川物流（深圳）有限公司；公告类型：起诉状副本送达；刊登日期：2024-09-09',
    published_at: '2024-09-10',
    keywords: ['法院公告'],
  },

  // 白鹭湾餐饮管理有限公司: the registry page's code fails its check character.
  {
    title: '白鹭湾餐饮管理有限公司 - 企业信用信息公示',
    url: 'https://www.gsxt.gov.cn/corp/91310104MA1BL6WN1E',
    snippet: '企业名称：白鹭湾餐饮管理有限公司；统一社会信用代码：91310104MA1BL6WN1E；登记状态：存续；成立日期：2020-10-09',
    published_at: '2025-04-02',
    keywords: ['工商信息'],
  },
  {
    title: '白鹭湾餐饮管理有限公司开庭公告',
    url: 'https://tingshen.court.gov.cn/notice/2025-0612-88',
    snippet: '被告：白鹭湾餐饮管理有限公司；案由：劳动争议；开庭时间：2025-06-12 14:00',
    published_at: '2025-06-01',
    keywords: ['开庭公告'],
  },

  // 云杉智能制造有限公司: only the unofficial aggregator knows it.
  {
    title: '云杉智能制造有限公司 工商信息 - 企业查询',
    url: 'https://qiye.example.net/corp/yunshan-zhineng',
    snippet: '企业名称：云杉智能制造有限公司；统一社会信用代码：91510100MA6CYT2T7M；经营状态：在业',
    published_at: '2025-03-15',
    keywords: ['工商信息'],
  },

  // A valid code that no page names a company for.
  {
    title: '统一社会信用代码 91330106MA2H5YT944 查询结果',
    url: 'https://qiye.example.net/code/91330106MA2H5YT944',
    snippet: '统一社会信用代码：91330106MA2H5YT944；该代码对应的企业信息暂未收录。',
    published_at: '2025-02-01',
    keywords: [],
  },
];

function normalize(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

const INDEX = CORPUS.map((page) => ({
  page,
  text: normalize([page.title, page.snippet, ...page.keywords].join(' ')),
}));

/** Is the page's host one of `domains`, or a subdomain of one (the domain filters' rule)? */
export function onDomains(url: string, domains: readonly string[]): boolean {
  const host = new URL(url).hostname;
  return domains.some((d) => host === d || host.endsWith(`.${d}`));
}

/**
 * The pages containing every whitespace-separated term of the query (after NFKC and lower-casing),
 * only those on `domains` (or their subdomains) when any are given, newest first (pages without a
 * date last), at most `maxResults`. Each simulated search provider answers these in its own shape.
 */
export function searchCorpus(query: string, domains: readonly string[], maxResults: number): CorpusPage[] {
  const terms = normalize(query).split(/\s+/).filter(Boolean);
  if (terms.length === 0) return [];
  return INDEX.filter(({ page, text }) => (domains.length === 0 || onDomains(page.url, domains)) && terms.every((t) => text.includes(t)))
    .map(({ page }) => page)
    .sort((a, b) => (b.published_at || '0').localeCompare(a.published_at || '0'))
    .slice(0, maxResults);
}
