/** The origin (scheme, host, port) of an endpoint URL, or the URL itself when it does not parse (the send reports that). */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * At most `perOrigin` requests in flight to one endpoint origin at a time, however many subscriptions post
 * to it: the rest wait in arrival order. Requests go over the origin's kept-alive connections (the agent
 * pools them per origin), so an origin serving many subscriptions gets at most that many connections
 * instead of one per subscription delivered to at once, and one slow origin cannot take every slot of the
 * connection pool.
 */
export class OriginGate {
  private readonly origins = new Map<string, { active: number; waiting: Array<() => void> }>();

  constructor(private readonly perOrigin: number) {}

  async run<T>(url: string, task: () => Promise<T>): Promise<T> {
    const key = originOf(url);
    let origin = this.origins.get(key);
    if (!origin) this.origins.set(key, (origin = { active: 0, waiting: [] }));
    if (origin.active >= this.perOrigin) await new Promise<void>((resolve) => origin!.waiting.push(resolve));
    else origin.active++;
    try {
      return await task();
    } finally {
      const next = origin.waiting.shift();
      if (next) next();
      else if (--origin.active === 0) this.origins.delete(key);
    }
  }

  /** Requests in flight to `url`'s origin now. */
  inFlight(url: string): number {
    return this.origins.get(originOf(url))?.active ?? 0;
  }
}
