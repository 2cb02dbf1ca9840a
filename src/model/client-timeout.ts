/** A timer of ours fired (connect, idle, attempt): the cause carries which one and the limit, for the message. */
export class ClientTimeout extends Error {
  constructor(readonly what: string) {
    super(what);
    this.name = "ClientTimeout";
  }
}
