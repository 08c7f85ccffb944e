/** Identifiers for new records. */
export interface IdGenerator {
  /** A fresh job id: 12 lowercase hexadecimal characters, random; never reused in practice. */
  jobId(): string;
}
