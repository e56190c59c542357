import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { isSafeText } from '../../src/http/safe-text';
import { minutesModel, normalizeMinutesRequest, parseMinutesRequest } from '../../src/minutes/request';
import { ALL_MODEL_TYPES } from '../../src/model-types';

describe('minutes requests: the stored file name is text PostgreSQL accepts', () => {
  const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
  const model = minutesModel(catalog, 'service-minutes');
  const fileNameOf = (fileUrl: string) =>
    normalizeMinutesRequest(catalog, model, parseMinutesRequest({ model: model.id, file_url: fileUrl, file_type: 'audio' }), 'req_1').file_name;

  it('keeps a name that decodes to NUL or a lone surrogate encoded', () => {
    expect(fileNameOf('https://media.example/a%00b.mp3')).to.equal('a%00b.mp3');
    expect(fileNameOf('https://media.example/%ED%A0%80.mp3')).to.satisfy(isSafeText);
    expect(fileNameOf('https://media.example/team%20sync.mp3')).to.equal('team sync.mp3');
  });

  it('cuts a long name by code points, never inside a surrogate pair', () => {
    const name = fileNameOf(`https://media.example/${'a'.repeat(254)}%F0%9F%98%80%F0%9F%98%80.mp3`);
    expect(name).to.equal(`${'a'.repeat(254)}😀`);
  });
});
