import type { UrlSigner } from '../../files/signed-urls';
import { ApiError } from '../../http/errors';

/**
 * The conversation ids clients see. The provider's conversations all live under the gateway's one
 * provider account, so a raw provider id would let any account continue any conversation whose id
 * it learned. The client gets `<provider id>.<tag>`, the tag binding the id to the account; an id
 * that is not this account's, or was made up, is refused before anything is reserved.
 */
export class ConversationIds {
  constructor(private readonly signer: UrlSigner) {}

  private scope(accountId: string): string {
    return `webqa-conversation\n${accountId}`;
  }

  forClient(accountId: string, providerId: string): string {
    return `${providerId}.${this.signer.tag(this.scope(accountId), providerId)}`;
  }

  /** The provider's id behind a client's id, or a 400 naming the field. */
  fromClient(accountId: string, clientId: string): string {
    const dot = clientId.lastIndexOf('.');
    const providerId = dot > 0 ? clientId.slice(0, dot) : '';
    if (providerId === '' || !this.signer.hasTag(this.scope(accountId), providerId, clientId.slice(dot + 1))) {
      throw new ApiError(400, 'conversation_not_found', `conversation ${clientId} is not one of this account's conversations`, {
        param: 'extension_options.conversation_id',
      });
    }
    return providerId;
  }
}
