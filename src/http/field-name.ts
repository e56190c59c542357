/**
 * A field of a request as a client writes it, the one form every refusal names fields in (`param`
 * and messages): array positions in brackets, member names dotted, a name that would read as
 * more than one (empty, or holding a dot, a bracket or a quote) quoted in brackets
 * (`metadata["a.b"]`); `body` for the whole value.
 */
export function fieldName(steps: readonly (string | number)[]): string {
  let name = '';
  for (const step of steps) {
    if (typeof step === 'number') name += `[${step}]`;
    else if (step === '' || /[.[\]"]/.test(step)) name += `[${JSON.stringify(step)}]`;
    else name += name === '' ? step : `.${step}`;
  }
  return name === '' ? 'body' : name;
}
