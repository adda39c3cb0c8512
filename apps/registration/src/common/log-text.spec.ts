import { describe, expect, it } from '@jest/globals';
import { loggableError, logText } from './log-text.js';

/** Every character after which a terminal, an editor or a log collector may start a new line. */
const LINE_BREAKS = ['\n', '\r', '\v', '\f', '\u001c', '\u001d', '\u001e', '\u0085', '\u2028', '\u2029'];

describe('logText', () => {
  it('leaves printable text as it is, quotes included', () => {
    expect(logText(`user '0VcRBkd00000000' said "hi" — été`)).toBe(`user '0VcRBkd00000000' said "hi" — été`);
  });

  it.each(LINE_BREAKS)('escapes U+%#: no line break survives', (lineBreak) => {
    const escaped = logText(`a${lineBreak}[Nest] 1 - FORGED`);
    expect(LINE_BREAKS.some((c) => escaped.includes(c))).toBe(false);
    expect(escaped).toMatch(/^a\\(n|r|v|f|u[0-9a-f]{4})\[Nest\] 1 - FORGED$/);
  });

  it('escapes every C0 and C1 control, DEL and lone surrogates, and the backslash (so an escape cannot be faked)', () => {
    const controls = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).join('');
    const c1 = Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(0x7f + i)).join('');
    const escaped = logText(`${controls}${c1}\ud800x\udfff\\n`);
    // eslint-disable-next-line no-control-regex
    expect(escaped).not.toMatch(/[\u0000-\u001f\u007f-\u009f]|[\ud800-\udfff]/);
    expect(escaped).toContain('\\u001b');
    expect(escaped).toContain('\\u0085');
    expect(escaped).toContain('\\ud800x\\udfff');
    expect(escaped.endsWith('\\\\n')).toBe(true);
  });

  it('turns anything into text first', () => {
    expect(logText(42)).toBe('42');
    expect(logText(undefined)).toBe('undefined');
  });
});

describe('loggableError', () => {
  it("escapes an error's message and the header of its stack, and keeps its frames", () => {
    const error = new Error('refused the value "a\n[Nest] 1 - FORGED"');
    const { message, stack } = loggableError(error);
    expect(message).toBe('refused the value "a\\n[Nest] 1 - FORGED"');
    const lines = stack!.split('\n');
    expect(lines[0]).toBe('Error: refused the value "a\\n[Nest] 1 - FORGED"');
    expect(lines.slice(1).every((line) => /^\s+at /.test(line))).toBe(true);
  });

  it('escapes a whole stack whose header no longer matches the message', () => {
    const error = new Error('first');
    error.message = 'second\nFORGED';
    error.stack = `Error: something\nFORGED\n    at somewhere (file.js:1:1)`;
    expect(loggableError(error).stack).not.toContain('\n');
  });

  it('describes a thrown non-Error by its text, escaped', () => {
    expect(loggableError('a\nb')).toEqual({ message: 'a\\nb' });
  });
});
