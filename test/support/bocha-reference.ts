/**
 * Examples of Bocha's Web Search API reference, https://bocha-ai.feishu.cn/wiki/RXEOw02rFiwzGSkd9mUcqoeAnNK
 * (as published verbatim in fengin/search-server `src/search/proxy/bocha/api_doc.md` and
 * timi233/ent_agent `docs/api/bocha-api.md`): the contract of the Bocha adapter and of the
 * simulated Bocha, which have no official SDK to be tested with.
 */

/** The reference's request example. */
export const DOCUMENTED_REQUEST = { query: '阿里巴巴2024年的esg报告', freshness: 'noLimit', summary: true, count: 50 };

/** The reference's answer example, its first two pages. */
export const DOCUMENTED_ANSWER = {
  code: 200,
  log_id: 'd71841ad20095f61',
  msg: null,
  data: {
    _type: 'SearchResponse',
    queryContext: { originalQuery: '阿里巴巴2024年的esg报告' },
    webPages: {
      webSearchUrl: '',
      totalEstimatedMatches: 8912791,
      value: [
        {
          id: null,
          name: '阿里巴巴发布2024年ESG报告　持续推进减碳与数字化普惠',
          url: 'https://www.alibabagroup.com/document-1752073403914780672',
          displayUrl: 'https://www.alibabagroup.com/document-1752073403914780672',
          snippet: '阿里巴巴集团发布《2024财年环境、社会和治理（ESG）报告》（下称“报告”），详细分享过去一年在ESG各方面取得的进展。',
          siteName: 'www.alibabagroup.com',
          siteIcon: 'https://th.bochaai.com/favicon?domain_url=https://www.alibabagroup.com/document-1752073403914780672',
          dateLastCrawled: '2024-07-22T00:00:00Z',
          cachedPageUrl: null,
          language: null,
          isFamilyFriendly: null,
          isNavigational: null,
        },
        {
          id: null,
          name: '阿里巴巴发布2024年ESG报告，阿里云数据中心清洁能源占比达56.0%',
          url: 'http://tech.cnr.cn/techph/20240722/t20240722_526807992.shtml',
          displayUrl: 'http://tech.cnr.cn/techph/20240722/t20240722_526807992.shtml',
          snippet: '阿里巴巴集团发布《环境、社会和治理报告（2024）》（以下简称“ESG报告”）提及，阿里巴巴自身运营减少碳排放量达232.0万吨。',
          siteName: '央广网',
          siteIcon: 'https://th.bochaai.com/favicon?domain_url=http://tech.cnr.cn/techph/20240722/t20240722_526807992.shtml',
          dateLastCrawled: '2024-07-22T17:54:38Z',
          cachedPageUrl: null,
          language: null,
          isFamilyFriendly: null,
          isNavigational: null,
        },
      ],
      someResultsRemoved: true,
    },
    images: null,
    videos: null,
  },
};
