import { createContext, useContext } from 'react';

export interface AccountView {
  readonly id: string;
  readonly name: string;
  readonly balance: { available: number; frozen: number; currency: 'CNY' };
  readonly settings: { default_video_url_mode: 'auto' | 'upstream' | 'tos'; timezone: string };
}

/** The signed-in owner's account (its time zone dates every page); null for the operator. */
export const AccountContext = createContext<AccountView | null>(null);

export function useAccount(): AccountView | null {
  return useContext(AccountContext);
}
