/**
 * The API key, when the server asks for one. A 401 opens a small modal form; the key is kept in
 * localStorage (per origin) and sent as `Authorization: Bearer <key>`. Every request that meets a 401
 * while the form is open waits for the same answer, so one prompt serves them all.
 */
const STORAGE_KEY = 'chorus.apiKey';

export function createAuth(dialog, { onChange } = {}) {
  let memory = null; // when localStorage is unavailable (some private modes)
  let waiting = null;
  const form = dialog.querySelector('form');
  const input = dialog.querySelector('input[name="api_key"]');
  const message = dialog.querySelector('[data-role="key-message"]');

  const read = () => {
    try {
      return localStorage.getItem(STORAGE_KEY);
    } catch {
      return memory;
    }
  };
  const write = (value) => {
    memory = value;
    try {
      if (value === null) localStorage.removeItem(STORAGE_KEY);
      else localStorage.setItem(STORAGE_KEY, value);
    } catch {
      /* memory keeps it for this page */
    }
    onChange?.(value);
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) {
      message.textContent = 'Enter an API key.';
      input.focus();
      return;
    }
    write(key);
    input.value = '';
    dialog.close();
    const resolve = waiting?.resolve;
    waiting = null;
    resolve?.(key);
  });
  // Nothing on the dashboard works without a key, so Escape does not dismiss the form.
  dialog.addEventListener('cancel', (event) => event.preventDefault());

  return {
    get key() {
      return read();
    },
    forget() {
      write(null);
    },
    /** Shows the form (once for any number of callers) and resolves with the key entered. */
    prompt(reason, signal) {
      const hadKey = read() !== null;
      if (hadKey) write(null);
      if (!waiting) {
        let resolve;
        const promise = new Promise((r) => (resolve = r));
        waiting = { promise, resolve };
        message.textContent = hadKey ? `The server refused the key: ${reason ?? 'unauthorized'}. Enter another.` : 'This Chorus needs an API key.';
        if (!dialog.open) dialog.showModal();
        input.focus();
      }
      const shared = waiting.promise;
      if (!signal) return shared;
      return new Promise((resolve, reject) => {
        const abort = () => reject(new DOMException('aborted', 'AbortError'));
        if (signal.aborted) return abort();
        signal.addEventListener('abort', abort, { once: true });
        shared.then(resolve);
      });
    },
  };
}
