import { expect } from 'chai';
import { Service } from '@volcengine/openapi';
import { startSimulator, type RunningSimulator } from '../../simulator';
import fs from 'node:fs';
import { EXAMPLE_CHANNELS_FILE, type ChannelEntry } from '../../src/upstreams/registry';
import { waitFor } from '../support/wait';

/**
 * The simulated Volcengine OpenAPI (Ark's asset library and real-person verification) driven by
 * Volcengine's official Node SDK, unchanged: its generic Service signs and sends any Action of a
 * service, so the simulator accepting its requests and answering what it reads proves it speaks
 * the provider's protocol (signature, Action and Version, ResponseMetadata and Result).
 */
/** The placeholder access key of the checked-in channels file's ark-assets entry: the one the simulated provider knows. */
function exampleKey(): { accessKeyId: string; secretKey: string } {
  const entry = (JSON.parse(fs.readFileSync(EXAMPLE_CHANNELS_FILE, 'utf8')) as ChannelEntry[]).find((e) => e.name === 'ark-assets');
  return { accessKeyId: entry!.volcengine!.access_key_id!, secretKey: entry!.volcengine!.secret_access_key! };
}

describe('simulated Volcengine OpenAPI (asset library) through the official @volcengine/openapi SDK', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator();
  });
  after(async () => sim.close());

  function ark(credentials: { accessKeyId: string; secretKey: string } = exampleKey()) {
    const url = new URL(sim.url);
    const service = new Service({ serviceName: 'ark', region: 'cn-beijing', host: url.host, protocol: 'http:', defaultVersion: '2024-01-01', ...credentials });
    // The simulator serves the provider's root path under /volcengine/.
    return (action: string, body: Record<string, unknown>) => service.createJSONAPI(action)(body, { Action: action, pathname: '/volcengine/' });
  }

  it('verifies a person, creates an image asset in their group and reads it until Active', async () => {
    const call = ark();
    const opened = await call('CreateVisualValidateSession', { CallbackURL: 'https://app.example.com/verified' });
    expect(opened.ResponseMetadata).to.deep.include({ Action: 'CreateVisualValidateSession', Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' });
    expect(opened.ResponseMetadata.Error).to.equal(undefined);
    const session = opened.Result as { BytedToken: string; H5Link: string; CallbackURL: string };
    expect(session.CallbackURL).to.equal('https://app.example.com/verified');
    expect(session.BytedToken).to.match(/^\d{14}[0-9A-F]{20}$/);

    expect((await call('GetVisualValidateResult', { BytedToken: session.BytedToken })).Result, 'not finished yet').to.deep.equal({});
    const consent = await fetch(session.H5Link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'consent=yes&decision=consent' });
    expect(consent.status).to.equal(200);
    const result = await call('GetVisualValidateResult', { BytedToken: session.BytedToken });
    const groupId = (result.Result as { GroupId: string }).GroupId;
    expect(groupId).to.match(/^group-\d{14}-/);

    const created = await call('CreateAsset', { GroupId: groupId, URL: 'https://images.example.com/alice.png', AssetType: 'Image' });
    const id = (created.Result as { Id: string }).Id;
    expect(id).to.be.a('string');
    const first = (await call('GetAsset', { Id: id })).Result as Record<string, unknown>;
    expect(first).to.deep.include({ Id: id, GroupId: groupId, AssetType: 'Image', URL: 'https://images.example.com/alice.png', Status: 'Processing', ProjectName: 'default' });
    await waitFor('the asset Active', async () => ((await call('GetAsset', { Id: id })).Result as { Status: string }).Status === 'Active');
  });

  it('refuses a wrong secret, an unknown access key and an unknown Action as the provider does', async () => {
    const wrongSecret = await ark({ accessKeyId: exampleKey().accessKeyId, secretKey: 'not-the-secret' })('CreateVisualValidateSession', {});
    expect(wrongSecret.ResponseMetadata.Error).to.deep.include({ Code: 'SignatureDoesNotMatch' });
    expect(wrongSecret.Result).to.equal(undefined);
    const unknownKey = await ark({ accessKeyId: 'AKLTunknown', secretKey: 'x' })('GetAsset', { Id: 'asset-1' });
    expect(unknownKey.ResponseMetadata.Error).to.deep.include({ Code: 'InvalidAccessKey' });
    const unknownAction = await ark()('DeleteEverything', {});
    expect(unknownAction.ResponseMetadata.Error).to.deep.include({ Code: 'InvalidActionOrVersion' });
  });
});
