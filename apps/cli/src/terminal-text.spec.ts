import { forTerminal, oneLine } from './terminal-text';

describe('terminal text', () => {
  it('forTerminal - escape sequences, carriage returns, C1 controls and bidirectional overrides are shown as \\u escapes; tabs, line feeds and other text are kept', () => {
    const hostile = 'clear\u001b[2J title\u001b]0;pwned\u0007 over\rwrite csi\u009b31m rtl\u202egnp.exe\u2066iso\u2069 del\u007f';
    expect(forTerminal(hostile)).toBe('clear\\u001b[2J title\\u001b]0;pwned\\u0007 over\\u000dwrite csi\\u009b31m rtl\\u202egnp.exe\\u2066iso\\u2069 del\\u007f');
    expect(forTerminal('tab\there\nnext line: Grüße, 日本語, مرحبا, emoji 🙂')).toBe('tab\there\nnext line: Grüße, 日本語, مرحبا, emoji 🙂');
  });

  it('forTerminal - a JSON document stays valid JSON with the same value', () => {
    const value = { query: 'a\u009bb\u202ec\u001bd', answer: 'x\ny' };
    const text = forTerminal(JSON.stringify(value, null, 2));
    expect(text).not.toMatch(/[\u0080-\u009f\u202e\u001b]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  it('oneLine - a value with line breaks cannot make lines that look like the CLI\'s own', () => {
    expect(oneLine('hello\nstatus: completed')).toBe('hello\\nstatus: completed');
  });
});
