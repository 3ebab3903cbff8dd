import { useApp } from '../context';
import { MONEY_PROBLEM_MESSAGE, moneyInput, parseMoney, translate, type Lang } from '../i18n';

// An amount range typed in reais ("1.234,56"), sent as centavos; each bound optional.
export function amountRangeErrors(lang: Lang, minText: string, maxText: string): { errors: Record<string, string>; min?: number; max?: number } {
  const errors: Record<string, string> = {};
  const read = (text: string, key: string) => {
    if (text.trim() === '') return undefined;
    const p = parseMoney(lang, text);
    if (p.ok) return p.cents;
    errors[key] = translate(lang, MONEY_PROBLEM_MESSAGE[p.problem]);
    return undefined;
  };
  const min = read(minText, 'min');
  const max = read(maxText, 'max');
  return { errors, min, max };
}

// Focus the first field with an error (in the order given); true when there was one.
export function focusFirstInvalid(errors: Record<string, string>, ids: string[]): boolean {
  for (const id of ids) {
    const key = id.split('-').pop() as string;
    if (errors[key]) {
      document.getElementById(id)?.focus();
      return true;
    }
  }
  return false;
}

export function AmountRange({ prefix, min, max, errors, onMin, onMax }: { prefix: string; min: string; max: string; errors: Record<string, string>; onMin: (e: Event) => void; onMax: (e: Event) => void }) {
  const { t } = useApp();
  const field = (key: 'min' | 'max', value: string, onInput: (e: Event) => void) => (
    <div class="field">
      <label for={`${prefix}-${key}`}>{t(key === 'min' ? 'filters.amountMin' : 'filters.amountMax')}</label>
      <input id={`${prefix}-${key}`} inputMode="decimal" value={value} onInput={onInput} aria-invalid={errors[key] ? true : undefined} aria-describedby={errors[key] ? `${prefix}-${key}-error` : undefined} />
      {errors[key] ? <p id={`${prefix}-${key}-error`} class="field-error">{errors[key]}</p> : null}
    </div>
  );
  return <>{field('min', min, onMin)}{field('max', max, onMax)}</>;
}

export { moneyInput };
