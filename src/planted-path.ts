/**
 * Whether a file or folder yiem is about to use may have been planted by another local user.
 * Rules (docs/reliability.md, "Files from a folder you do not control"):
 * - an entry is suspect when it belongs to neither the current user nor root and the folder
 *   holding it is writable by group or others (`/tmp`, a shared project folder): anyone with
 *   write access there could have put it there;
 * - the rule holds for the entry itself and for every symbolic link on the way to it, each link
 *   judged by its own owner (lstat) and its own folder: `agent.config.yaml -> /etc/subuid`
 *   planted by another user is refused although its target is root's;
 * - a missing entry is not suspect (the caller reports it as missing);
 * - without POSIX owners (Windows) nothing is suspect.
 */
import { lstatSync, readlinkSync, statSync, type Stats } from "node:fs";
import path from "node:path";

/** The entry that may have been planted, and its owner. */
export interface PlantedEntry {
  path: string;
  uid: number;
  /** Whether the entry is a symbolic link (for messages). */
  link: boolean;
}

/** Links followed at most (as the kernel's own limit): a loop ends the walk. */
const MAX_LINKS = 40;

/**
 * Whether `entry` may have been planted: it belongs to neither `uid` nor root and `folder`, the
 * folder holding it, is writable by group or others.
 */
export function mayBePlanted(entry: Pick<Stats, "uid">, folder: Pick<Stats, "mode"> | undefined, uid: number | undefined): boolean {
  if (uid === undefined || entry.uid === uid || entry.uid === 0) return false;
  return folder !== undefined && (folder.mode & 0o022) !== 0;
}

/** The first entry on the way to `target` (absolute, or relative to cwd) that may have been planted; null when none. */
export function plantedOnTheWay(target: string, uid: number | undefined = process.getuid?.()): PlantedEntry | null {
  if (uid === undefined || !lstatSync(target, { throwIfNoEntry: false })) return null;
  let pending = path.resolve(target).split(path.sep).filter(Boolean);
  let at = path.parse(path.resolve(target)).root;
  let links = 0;
  while (pending.length > 0) {
    const name = pending.shift() as string;
    if (name === ".") continue;
    if (name === "..") {
      at = path.dirname(at);
      continue;
    }
    const entry = path.join(at, name);
    const stats = lstatSync(entry, { throwIfNoEntry: false });
    if (!stats) return null;
    const isLink = stats.isSymbolicLink();
    if ((isLink || pending.length === 0) && mayBePlanted(stats, statSync(at, { throwIfNoEntry: false }), uid)) {
      return { path: entry, uid: stats.uid, link: isLink };
    }
    if (!isLink) {
      at = entry;
      continue;
    }
    if (++links > MAX_LINKS) return null; // a loop: opening it fails with ELOOP, reported there
    const destination = readlinkSync(entry);
    if (path.isAbsolute(destination)) at = path.parse(destination).root;
    pending = [...destination.split(path.sep).filter(Boolean), ...pending];
  }
  return null;
}

/**
 * Why `found` (on the way to `target`) is refused, to follow the name of `target` in a message:
 * "belongs to another user (uid N) and sits in a folder others can write to, …", "is a link that
 * belongs …", or "goes through the link L, which belongs …".
 */
export function plantedReason(found: PlantedEntry, target: string): string {
  const owner = `belongs to another user (uid ${found.uid}) and sits in a folder others can write to, so anyone could have put it there`;
  if (!found.link) return owner;
  return found.path === path.resolve(target) ? `is a link that ${owner}` : `goes through the link ${found.path}, which ${owner}`;
}
