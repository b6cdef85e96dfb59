/** A file as `fstat` sees it: a change by anyone else shows as a different identity, size or time. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}
