/**
 * Characters a terminal acts on instead of showing them: the C0 controls but tab and line feed (ESC
 * starts the sequences that move the cursor, clear the screen, set the window's title or write a
 * link; carriage return and backspace overwrite what was written), DEL, the C1 controls (U+009B is a
 * CSI of its own to some terminals), and the bidirectional formatting characters, which make text
 * read in another order than it is stored ("Trojan Source"). Any of them can come in what the CLI
 * prints: a query, an error message, a document title are whatever someone sent.
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` safe to write to a terminal: each such character is shown as its `\uXXXX` escape. JSON
 * writes the same escape, so a JSON document stays valid and means the same (JSON.stringify escapes
 * the C0 controls itself, not the others).
 */
export function forTerminal(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A value shown within one line of a rendering: its line breaks shown as `\n`, so that it cannot make lines that look like the CLI's own. */
export function oneLine(text: string): string {
  return text.replace(/\n/g, '\\n');
}
