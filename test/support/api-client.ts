import { contractOf } from './openapi-contract';
/** A minimal HTTP client for black-box tests: it sees exactly what an API client sees. */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  headers?: Record<string, string>;
  /** Sent as is, for malformed or oversized bodies. */
  rawBody?: string | Buffer;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string,
  ) {}

  withKey(key: string): ApiClient {
    return new ApiClient(this.baseUrl, key);
  }

  async request<T = any>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? this.apiKey : options.key;
    if (key !== null) headers['X-Api-Key'] = key;
    let payload: string | Buffer | undefined;
    if (options.rawBody !== undefined) payload = options.rawBody;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['Content-Type'] = 'application/json';
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    const broken = (await contractOf(this.baseUrl)).check(method, res.url || `${this.baseUrl}${path}`, res.status, res.headers.get('content-type'), parsed);
    if (broken) throw new Error(`Contract: ${broken}\nbody: ${text.slice(0, 500)}`);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, undefined, options);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, body, options);
  }
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, body, options);
  }
  put<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, body, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, undefined, options);
  }

  /** Follows next_cursor to the end and returns every item. */
  async listAll<T = any>(path: string, pageSize = 200): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | undefined;
    const sep = path.includes('?') ? '&' : '?';
    do {
      const res = await this.get(`${path}${sep}limit=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text}`);
      items.push(...res.body.data);
      cursor = res.body.has_more ? res.body.next_cursor : undefined;
    } while (cursor);
    return items;
  }
}

/**
 * Polls `probe` until it returns a value other than undefined. `timeoutMs` is a safety net just inside
 * the jest timeout, not an expected speed: a loaded machine can take many times longer than a quiet one.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs = 50_000,
  intervalMs = 50,
  /** An error that waiting cannot cure (a process that exited) ends the wait at once. */
  isFinal: (err: unknown) => boolean = () => false,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      if (isFinal(err)) throw err;
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
