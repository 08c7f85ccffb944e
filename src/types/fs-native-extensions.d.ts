/** The part of fs-native-extensions (holepunchto) this project uses; the package ships no types. */
declare module 'fs-native-extensions' {
  /** Takes an exclusive (or, with `shared`, a shared) lock on the open file without waiting; false when it is held elsewhere. */
  export function tryLock(fd: number, options?: { shared?: boolean }): boolean;
  export function unlock(fd: number): void;
}
