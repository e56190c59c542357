import { expect } from 'chai';

/** The consent form of a verification page, as a browser would read it: where it posts, and the fields a consenting person sends. */
export function consentForm(html: string, pageUrl: string): { action: string; consent: URLSearchParams; decline: URLSearchParams } {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  const checkbox = /<input type="checkbox" id="([^"]+)" name="([^"]+)" value="([^"]+)" required>/.exec(html);
  const buttons = [...html.matchAll(/<button type="submit" name="([^"]+)" value="([^"]+)"/g)];
  expect(action, 'the form posts somewhere').to.be.a('string');
  expect(checkbox, 'a required consent checkbox').to.not.equal(null);
  expect(html, 'the checkbox is labelled').to.include(`<label for="${checkbox![1]}">`);
  const consentButton = buttons.find((b) => b[2] === 'consent');
  const declineButton = buttons.find((b) => b[2] === 'decline');
  expect(consentButton && declineButton, 'a consent and a decline button').to.not.equal(undefined);
  return {
    action: new URL(action!, pageUrl).toString(),
    consent: new URLSearchParams([[checkbox![2]!, checkbox![3]!], [consentButton![1]!, consentButton![2]!]]),
    decline: new URLSearchParams([[declineButton![1]!, declineButton![2]!]]),
  };
}

/** Has the person consent on the verification page at `url`, as a browser would post its form. */
export async function consentOnPage(url: string): Promise<void> {
  const form = consentForm(await (await fetch(url)).text(), url);
  const sent = await fetch(form.action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.consent.toString() });
  expect(sent.status).to.equal(200);
}
