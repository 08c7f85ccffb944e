/** The current time. Inject it everywhere time matters so tests can hold time still. */
export interface Clock {
  /** The current instant. Time zones are the caller's business. */
  now(): Date;
}
