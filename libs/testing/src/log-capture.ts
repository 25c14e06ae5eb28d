import { Writable } from 'node:stream';

/** A pino destination that keeps every line, parsed, for assertions on logs. */
export class LogCapture extends Writable {
  readonly lines: Array<Record<string, unknown>> = [];
  /** The same lines as written (JSON.parse keeps one of two equal keys; the text has both). */
  readonly raw: string[] = [];
  private partial = '';

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const text = this.partial + chunk.toString('utf8');
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      this.raw.push(line);
      this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    callback();
  }
}

/** The keys that appear more than once at the top level of a JSON object's text. */
export function duplicateTopLevelKeys(json: string): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      let j = i + 1;
      while (j < json.length && json[j] !== '"') j += json[j] === '\\' ? 2 : 1;
      const text = json.slice(i, j + 1);
      let k = j + 1;
      while (json[k] === ' ') k++;
      if (depth === 1 && json[k] === ':') {
        const key = JSON.parse(text) as string;
        if (seen.has(key)) twice.add(key);
        seen.add(key);
      }
      i = j;
    } else if (c === '{' || c === '[') {
      depth++;
    } else if (c === '}' || c === ']') {
      depth--;
    }
  }
  return [...twice];
}
