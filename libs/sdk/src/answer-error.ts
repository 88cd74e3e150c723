/** The error a helper throws for an answer other than the one it wanted: the API's error, and the status. */
export function answerError(what: string, response: Response, error: { error?: { message?: string } } | undefined): Error {
  return Object.assign(new Error(`${what} answered ${response.status}: ${error?.error?.message ?? ''}`), { status: response.status, error });
}
