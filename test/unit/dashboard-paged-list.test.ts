import { expect } from 'chai';
import { appended, loadItems, MAX_LIMIT, pageUrl, reloadCount, type ListBody, type Loaded } from '../../web/src/paged-list';

/**
 * A list served as the API serves its pages: in a fixed order, `limit` items after a keyset
 * cursor (the last item's id), `next_after` only while more follow. `calls` records each request.
 */
function keysetList(initial: string[]) {
  const items = [...initial];
  const calls: { after: string | null; limit: number }[] = [];
  return {
    items,
    calls,
    async fetchPage(after: string | null, limit: number): Promise<ListBody<string>> {
      if (limit < 1 || limit > MAX_LIMIT) throw new Error(`limit ${limit} refused`);
      calls.push({ after, limit });
      const start = after === null ? 0 : items.indexOf(after) + 1;
      const data = items.slice(start, start + limit);
      const hasMore = start + limit < items.length;
      return { object: 'list', data, has_more: hasMore, next_after: hasMore ? data[data.length - 1]! : null };
    },
  };
}

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `e${String(from + i).padStart(4, '0')}`);

/** How the dashboard's paged lists load, page and reload (web/src/paged-list.ts). */
describe('the dashboard\'s paged lists', () => {
  it('asks for a page of a path with or without a query of its own, the cursor escaped', () => {
    expect(pageUrl('/v1/tasks', null, 20)).to.equal('/v1/tasks?limit=20');
    expect(pageUrl('/admin/v1/keys?status=active', 'key_ab', 50)).to.equal('/admin/v1/keys?status=active&limit=50&after=key_ab');
    expect(pageUrl('/admin/v1/requests', 'a+b/c=', 50)).to.equal('/admin/v1/requests?limit=50&after=a%2Bb%2Fc%3D');
  });

  it('loads a first page, then pages after the cursor of the items shown', async () => {
    const api = keysetList(ids(1, 120));
    const first = await loadItems((after, limit) => api.fetchPage(after, limit), reloadCount(null, 50));
    expect(first.items).to.deep.equal(ids(1, 50));
    expect(first.next).to.equal('e0050');
    const second = appended(first, first.next!, await api.fetchPage(first.next, 50));
    const third = appended(second, second.next!, await api.fetchPage(second.next, 50));
    expect(third).to.deep.equal({ items: ids(1, 120), next: null });
  });

  it('reloads an oldest-first list shown to its end with the entry a change added to its last page (the ledger after a credit)', async () => {
    const ledger = keysetList(ids(1, 51));
    const shown: Loaded<string> = { items: ids(1, 51), next: null };
    ledger.items.push('e0052');
    ledger.calls.length = 0;
    const reloaded = await loadItems((after, limit) => ledger.fetchPage(after, limit), reloadCount(shown, 50));
    expect(reloaded).to.deep.equal({ items: ids(1, 52), next: null });
    // As many as were shown and a page more, in requests the API accepts.
    expect(ledger.calls).to.deep.equal([{ after: null, limit: MAX_LIMIT }]);
  });

  it('reloads a newest-first list as far as it was shown, with no row lost or doubled between pages when rows arrive at its top', async () => {
    const newest = ids(1, 130).reverse();
    const log = keysetList(newest);
    const shown: Loaded<string> = { items: newest.slice(0, 120), next: newest[119]! };
    log.items.unshift('e0132', 'e0131');
    const reloaded = await loadItems(async (after, limit) => {
      const page = await log.fetchPage(after, limit);
      // Another row arrives between the requests of one reload: the cursors still hold.
      if (after === null) log.items.unshift('e0133');
      return page;
    }, reloadCount(shown, 50));
    expect(reloaded.items).to.deep.equal(ids(13, 132).reverse());
    expect(new Set(reloaded.items).size).to.equal(reloaded.items.length);
    expect(reloaded.next).to.equal('e0013');
    expect(log.calls).to.deep.equal([
      { after: null, limit: 100 },
      { after: 'e0033', limit: 20 },
    ]);
  });

  it('reloads a list of fewer items than a page (or none) in one request, and a complete one fully', async () => {
    const tasks = keysetList(ids(1, 3));
    expect(await loadItems((after, limit) => tasks.fetchPage(after, limit), reloadCount({ items: ids(1, 3), next: null }, 20))).to.deep.equal({ items: ids(1, 3), next: null });
    const empty = keysetList([]);
    expect(await loadItems((after, limit) => empty.fetchPage(after, limit), reloadCount({ items: [], next: null }, 20))).to.deep.equal({ items: [], next: null });
    expect(empty.calls).to.deep.equal([{ after: null, limit: 20 }]);
    expect(reloadCount({ items: ids(1, 20), next: 'e0020' }, 20)).to.equal(20);
    expect(reloadCount({ items: ids(1, 22), next: null }, 20)).to.equal(42);
  });

  it('drops a "Load more" page asked for after a cursor the list no longer ends at (a reload answered meanwhile)', () => {
    const shown: Loaded<string> = { items: ids(1, 50), next: 'e0050' };
    const page: ListBody<string> = { object: 'list', data: ids(51, 60), has_more: false, next_after: null };
    expect(appended(shown, 'e0050', page)).to.deep.equal({ items: ids(1, 60), next: null });
    const reloaded: Loaded<string> = { items: ids(1, 60), next: null };
    expect(appended(reloaded, 'e0050', page)).to.equal(reloaded);
  });
});
