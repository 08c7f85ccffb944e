import { copyFile, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { FileStoreError } from './FileStoreError.js';
import { errnoCode } from './fileSystem.js';

const PROFILE_NAME = /^[A-Za-z0-9][\w.-]*$/;

/**
 * The home of profile `name`: `<home>/profiles/<name>`, a complete home of its own (config,
 * jobs, memories). With `createIfMissing` a missing profile is created (0700) and given a copy
 * of the parent's config.yaml, so it can run an agent at once; otherwise a missing profile is
 * an error that says how to create it.
 */
export async function profileHome(home: string, name: string, createIfMissing: boolean): Promise<string> {
  if (!PROFILE_NAME.test(name)) {
    throw new FileStoreError(
      ERROR_CODES.PROFILE.INVALID_NAME,
      `"${name}" is not a valid profile name; use letters, digits, ".", "_" and "-", starting with a letter or digit.`,
    );
  }
  const profile = join(home, 'profiles', name);
  if (await isDirectory(profile)) return profile;
  if (!createIfMissing) {
    throw new FileStoreError(
      ERROR_CODES.PROFILE.NOT_FOUND,
      `The profile "${name}" does not exist (${profile}); add --create-if-missing to create it.`,
    );
  }
  try {
    await mkdir(profile, { recursive: true, mode: 0o700 });
    await copyFile(join(home, 'config.yaml'), join(profile, 'config.yaml')).catch((error: unknown) => {
      if (errnoCode(error) !== 'ENOENT') throw error;
    });
  } catch (error) {
    throw new FileStoreError(
      ERROR_CODES.PROFILE.UNWRITABLE,
      `Could not create the profile "${name}" at ${profile} (${errnoCode(error) ?? String(error)}); check that ${home} is writable.`,
      { cause: error },
    );
  }
  return profile;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
