import { expect } from 'chai';
import { Delivery } from '../../src/billing/metered';

/** What a stream's relay counts as delivered, and when it must settle by that rather than by the upstream's usage. */
describe('Delivery: the text a stream delivered to its client', () => {
  it('counts the text relayed while the client is there, and leaves the stream whole', () => {
    const client = new AbortController();
    const delivery = new Delivery(client.signal);
    delivery.add('Hello');
    delivery.add(', world');
    expect(delivery.text).to.equal('Hello, world');
    expect(() => delivery.assertWhole()).to.not.throw();
  });

  it('leaves the stream whole when the client left after the last text (the upstream usage still settles it)', () => {
    const client = new AbortController();
    const delivery = new Delivery(client.signal);
    delivery.add('all of it');
    client.abort();
    // The usage chunk and [DONE] carry no text.
    delivery.add('');
    expect(delivery.text).to.equal('all of it');
    expect(() => delivery.assertWhole()).to.not.throw();
  });

  it('does not count text relayed once the client left, and cuts the stream short with the client\'s abort', () => {
    const client = new AbortController();
    const delivery = new Delivery(client.signal);
    delivery.add('seen ');
    client.abort();
    delivery.add('never seen');
    expect(delivery.text).to.equal('seen ');
    expect(() => delivery.assertWhole()).to.throw().with.property('name', 'AbortError');
  });
});
