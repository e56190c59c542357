import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { ApiError } from '../../src/http/errors';
import { canonicalZone, inferFileType, isIanaZone, minutesCharges, minutesEstimate, minutesModel, normalizeMinutesRequest, parseMinutesRequest } from '../../src/minutes/request';
import { ALL_MODEL_TYPES } from '../../src/model-types';

describe('minutes requests: defaults, model rules and the estimate', () => {
  const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
  const service = minutesModel(catalog, 'service-minutes');
  const partner = minutesModel(catalog, 'partner-minutes');
  const normalize = (model = service, body: Record<string, unknown> = {}) =>
    normalizeMinutesRequest(catalog, model, parseMinutesRequest({ model: model.id, file_url: 'https://media.example/m/sync.MP3?x=1', ...body }), 'req_1');

  it('infers audio or video from the URL suffix, else from the media type, and nothing from anything else', () => {
    expect(inferFileType(new URL('https://a.example/x/y.wav?download=1'))).to.equal('audio');
    expect(inferFileType(new URL('https://a.example/y.MOV'))).to.equal('video');
    expect(inferFileType(new URL('https://a.example/y.txt'))).to.equal(null);
    expect(inferFileType(new URL('https://a.example/recording'))).to.equal(null);
    expect(inferFileType(new URL('https://a.example/recording'), 'audio/mpeg')).to.equal('audio');
    expect(inferFileType(new URL('https://a.example/recording'), 'video/mp4')).to.equal('video');
    expect(inferFileType(new URL('https://a.example/y.txt'), 'video/webm')).to.equal('video');
    expect(inferFileType(new URL('https://a.example/y.mp4'), 'audio/mpeg'), 'the suffix comes first').to.equal('video');
    expect(inferFileType(new URL('https://a.example/recording'), 'application/octet-stream')).to.equal(null);
    expect(inferFileType(new URL('https://a.example/recording'), null)).to.equal(null);
  });

  it('takes file_type from the probed media type when the suffix does not tell, and refuses when neither does', () => {
    const bare = { file_url: 'https://media.example/meetings/42/recording' };
    const probed = (mediaType: string | null) => normalizeMinutesRequest(catalog, service, parseMinutesRequest({ model: service.id, ...bare }), 'req_1', mediaType);
    expect(probed('video/quicktime').file_type).to.equal('video');
    expect(probed('audio/x-m4a').file_type).to.equal('audio');
    expect(() => probed(null)).to.throw(/^file_type is required when neither/);
    expect(() => probed('text/html')).to.throw(/^file_type is required when neither/);
    expect(normalizeMinutesRequest(catalog, service, parseMinutesRequest({ model: service.id, ...bare, file_type: 'audio' }), 'req_1', 'video/mp4').file_type, 'an explicit file_type wins').to.equal('audio');
  });

  it('accepts IANA zones only', () => {
    for (const zone of ['Asia/Shanghai', 'America/Argentina/Buenos_Aires', 'UTC', 'Etc/GMT+8']) expect(isIanaZone(zone), zone).to.equal(true);
    for (const zone of ['Mars/Base', '+08:00', 'Asia/', '', 'asia shanghai']) expect(isIanaZone(zone), zone).to.equal(false);
  });

  it('stores a time zone under its canonical name, whatever case the request used', () => {
    expect(canonicalZone('asia/shanghai')).to.equal('Asia/Shanghai');
    expect(canonicalZone('AMERICA/ARGENTINA/BUENOS_AIRES')).to.match(/^America\/(Argentina\/)?Buenos_Aires$/);
    expect(canonicalZone('utc')).to.equal('UTC');
    expect(canonicalZone('Europe/Berlin')).to.equal('Europe/Berlin');
    for (const zone of ['Mars/Base', '+08:00', '']) expect(canonicalZone(zone), zone).to.equal(null);
    expect(normalize(service, { timezone: 'asia/shanghai' }).timezone).to.equal('Asia/Shanghai');
    expect(normalize(service, { timezone: 'Asia/Shanghai' }).timezone).to.equal('Asia/Shanghai');
    expect(normalize(service, { timezone: null }).timezone).to.equal(null);
    expect(() => normalize(service, { timezone: 'asia/nowhere' })).to.throw(ApiError, /^timezone asia\/nowhere is not an IANA time zone$/);
  });

  it('applies the defaults; service-minutes ignores features and all_activate and always identifies speakers', () => {
    const r = normalize(service, { all_activate: true, features: { qa: true }, speaker_identification: false });
    expect(r).to.deep.include({
      file_type: 'audio',
      file_name: 'sync.MP3',
      source_lang: 'zh_cn',
      all_activate: false,
      speaker_identification: true,
      number_of_speakers: 0,
      need_word_time_series: false,
      recorded_at: null,
      timezone: null,
      features: ['summary', 'chapters', 'todos'],
      engine: 'auc_flash',
      rate_per_hour: 1_200_000,
      max_duration_ms: 7_200_000,
    });
    // chat-fast's output limit; parts whose prompt is 4096 / 4 tokens, enough for 2 h at 240 tokens a minute.
    expect(r.summary).to.deep.equal({ model: 'chat-fast', input_per_million: 1_000_000, output_per_million: 4_000_000, max_output_tokens: 4096, part_prompt_tokens: 1024, max_parts: 32 });
  });

  it('takes partner features as asked, all of them with all_activate, and the other language as the default translation target', () => {
    expect(normalize(partner, { features: { todos: true, qa: true } }).features).to.deep.equal(['todos', 'qa']);
    const all = normalize(partner, { all_activate: true, source_lang: 'en_us', speaker_identification: false });
    expect(all).to.deep.include({ all_activate: true, target_lang: 'zh_cn', speaker_identification: false, summary: null });
    expect(all.features).to.deep.equal(['summary', 'chapters', 'todos', 'qa', 'translate']);
    expect(() => normalize(partner, {})).to.throw(ApiError, /needs at least one of features/);
  });

  it('freezes 2 hours of ASR plus, for a summarising model, every summary part\'s upper bound', () => {
    // 2 h × 1.2 CNY/h, plus 32 parts of 1024 prompt tokens at 1 CNY/M and 4096 output tokens at 4 CNY/M.
    expect(minutesEstimate(catalog, normalize(service))).to.equal(2_400_000 + 32 * (1_024 + 4_096 * 4));
    expect(minutesEstimate(catalog, normalize(partner, { features: { qa: true } }))).to.equal(4_800_000);
  });

  it('charges ASR by duration and the summary by tokens, each rounded up once', () => {
    const r = { ...normalize(service), file_bytes: null };
    // 1 ms at 1.2 CNY/h is 1/3 minor unit: rounded up to 1.
    expect(minutesCharges(r, { duration_ms: 1 })).to.deep.include({ asrAmount: 1, flashAmount: 0, amount: 1 });
    expect(minutesCharges(r, { duration_ms: 180_000, flash_input_tokens: 1_001, flash_output_tokens: 250 })).to.deep.include({ asrAmount: 60_000, flashAmount: 2_001, amount: 62_001 });
    // A summary in parts: each call rounded up once (1.001 + 1.001 → 2 + 2), the totals kept.
    const parts = { duration_ms: 180_000, flash_input_tokens: 2, flash_output_tokens: 0, flash_calls: [{ input_tokens: 1, output_tokens: 0 }, { input_tokens: 1, output_tokens: 0 }] };
    expect(minutesCharges(r, parts)).to.deep.include({ flashAmount: 2, amount: 60_002, inputTokens: 2 });
    expect(minutesCharges(r, parts).callAmounts).to.deep.equal([{ input_tokens: 1, output_tokens: 0, amount: 1 }, { input_tokens: 1, output_tokens: 0, amount: 1 }]);
  });
});
