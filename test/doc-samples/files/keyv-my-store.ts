/** Stand-in for the reader's own Keyv adapter that docs/storage.md's conformance sample imports. */
export class KeyvMyStore extends Map<string, unknown> {
  constructor(readonly url: string) {
    super();
  }
}
