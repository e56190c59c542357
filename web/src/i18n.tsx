import { createContext, useContext } from 'react';
import { ZH } from './zh';

export type Language = 'en' | 'zh';

/** The browser's language decides at first; the switch in the header overrides it (kept in localStorage). */
export function initialLanguage(): Language {
  const saved = localStorage.getItem('dashboard.language');
  if (saved === 'en' || saved === 'zh') return saved;
  return navigator.language.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

export function saveLanguage(language: Language): void {
  localStorage.setItem('dashboard.language', language);
}

export interface I18n {
  readonly language: Language;
  /** BCP 47 locale for number and date formats. */
  readonly locale: string;
  /** The English text is the key; Chinese comes from zh.ts ({name} placeholders filled from `values`). */
  t(text: string, values?: Record<string, string | number>): string;
}

export function makeI18n(language: Language): I18n {
  return {
    language,
    locale: language === 'zh' ? 'zh-CN' : 'en-GB',
    t(text, values) {
      const template = language === 'zh' ? (ZH[text] ?? text) : text;
      return values ? template.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? `{${name}}`)) : template;
    },
  };
}

export const I18nContext = createContext<I18n>(makeI18n('en'));

export function useI18n(): I18n {
  return useContext(I18nContext);
}
