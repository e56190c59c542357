import { useState } from 'react';
import { useI18n } from './i18n';

/**
 * A long id kept out of a table's way: a small button (the id cut short, or "id") that opens the
 * whole id, selectable, with a copy button. Keyboard reachable like any button.
 */
export function IdDisclosure({ value, what, short = false }: { value: string; what: string; short?: boolean }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const [copied, setCopied] = useState(false);
  return (
    <span className="id-disclosure">
      <button type="button" className="id-toggle" aria-expanded={open} aria-label={t('Show the id of {what}', { what })} title={value} onClick={() => setOpen(!open)}>
        {short ? t('id') : value}
      </button>
      {open && (
        <span className="id-full">
          <code data-testid="full-id">{value}</code>{' '}
          <button
            type="button"
            className="id-copy"
            onClick={() => {
              void navigator.clipboard?.writeText(value).then(() => setCopied(true), () => setCopied(false));
            }}
          >
            {copied ? t('Copied') : t('Copy')}
          </button>
        </span>
      )}
    </span>
  );
}
