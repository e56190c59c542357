import { expect } from 'chai';
import { chargeChannels } from '../../src/billing/serving-channels';

describe('the channels a settlement names', () => {
  it('names none when no channel served (a free or cached answer, a task recorded before channels were)', () => {
    expect(chargeChannels(null, [])).to.deep.equal({});
  });

  it('names the one channel of a charge whose calls all went to it, with no list', () => {
    expect(chargeChannels('primary', [])).to.deep.equal({ channel: 'primary' });
    expect(chargeChannels('primary', ['primary', 'primary'])).to.deep.equal({ channel: 'primary' });
    expect(chargeChannels(null, ['search-a', 'search-a'])).to.deep.equal({ channel: 'search-a' });
  });

  it('names the main call and lists every channel, sorted, when the calls went to more than one', () => {
    expect(chargeChannels('writer', ['search-b', 'search-a'])).to.deep.equal({ channel: 'writer', channels: ['search-a', 'search-b', 'writer'] });
  });

  it('takes the first channel that served as the main one when the charge has no main call', () => {
    expect(chargeChannels(null, ['search-b', 'search-a'])).to.deep.equal({ channel: 'search-b', channels: ['search-a', 'search-b'] });
  });
});
