/** Waiting in the chaos tests: a plain sleep, and a promise given a deadline. */

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The promise's value, or `undefined` when it has not settled within `ms` (it goes on unheard). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  // A rejection after the deadline is nobody's to hear; it must not end the process.
  promise.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
