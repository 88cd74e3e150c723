/**
 * A document built on the first request for it and kept; a build that failed is tried again on the next
 * request. Memory: a gateway nobody asks for it neither loads the generator nor holds the document.
 */
export class BuiltOnFirstUse<T> {
  private build?: () => Promise<T>;
  private document?: Promise<T>;

  constructor(private readonly name: string) {}

  buildWith(build: () => Promise<T>): void {
    this.build = build;
  }

  get(): Promise<T> {
    if (!this.build) throw new Error(`The ${this.name} document is built by the running gateway`);
    this.document ??= this.build().catch((err: unknown) => {
      this.document = undefined;
      throw err;
    });
    return this.document;
  }
}
